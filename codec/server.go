package codec

import (
	"net/http"
	"slices"
	"strings"

	"go.temporal.io/sdk/converter"
)

// preflightMaxAge is how long a browser may reuse a CORS preflight's
// answer (Chromium caps it at two hours). Without it Chromium keeps one for
// 5 s only, so the Web UI's many decode calls (a page of workflows or
// events sends several) kept paying a preflight round trip each, queued on
// the six connections a browser opens to one origin: on a loaded machine
// the page showed binary/encrypted payloads until the answers came.
const preflightMaxAge = "7200"

// maxRequestBytes bounds a request body: a few payloads of Temporal's 2 MiB
// limit, base64 in JSON.
const maxRequestBytes = 16 << 20

// ServerOptions configure the codec server's HTTP handler.
type ServerOptions struct {
	// AllowedOrigins may call from a browser (the Web UI's origin, e.g.
	// http://127.0.0.1:8233). Others get no CORS headers, so a page on
	// another site cannot read decoded payloads through a user's browser.
	AllowedOrigins []string
	// Authorize, when set, checks each request (say, its Authorization
	// header) and returns an error to refuse it with 401.
	Authorize func(r *http.Request) error
}

// NewHandler serves the Temporal codec-server API (POST /encode and
// /decode, JSON {"payloads":[...]}) with CORS for the allowed origins.
func NewHandler(c *PayloadCodec, o ServerOptions) http.Handler {
	inner := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" {
			if !slices.Contains(o.AllowedOrigins, strings.TrimSuffix(origin, "/")) {
				http.Error(w, "origin not allowed", http.StatusForbidden)
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Max-Age", preflightMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if o.Authorize != nil {
			if err := o.Authorize(r); err != nil {
				http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
		inner.ServeHTTP(w, r)
	})
}
