package devserver

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// hostGuard serves the Web UI on its public address and forwards to the
// UI server on an internal loopback port, refusing every request whose
// Host header is not an address the UI is served as. A web page on another
// site that rebinds its DNS name to 127.0.0.1 (DNS rebinding) reaches the
// port, but its requests carry its own name as Host, so they get 421.
type hostGuard struct {
	srv *http.Server
}

// allowedHosts are the Host values a browser sends for ip:port; for a
// loopback address, localhost as well.
func allowedHosts(ip string, port int) map[string]bool {
	p := strconv.Itoa(port)
	hosts := map[string]bool{net.JoinHostPort(ip, p): true}
	if parsed := net.ParseIP(ip); parsed != nil && parsed.IsLoopback() {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			hosts[net.JoinHostPort(h, p)] = true
		}
	}
	return hosts
}

// hostCheck passes only requests for an allowed Host.
func hostCheck(allowed map[string]bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[strings.ToLower(r.Host)] {
			http.Error(w, "visor dev: Host "+strconv.Quote(r.Host)+" is not the address this Web UI serves", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// startHostGuard listens on ip:port and forwards checked requests to the
// UI server at backend (host:port on loopback).
func startHostGuard(ip string, port int, backend string) (*hostGuard, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: backend})
	proxy.ErrorHandler = proxyError
	srv := &http.Server{Handler: hostCheck(allowedHosts(ip, port), proxy), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return &hostGuard{srv: srv}, nil
}

// proxyError answers a request the UI server did not: 502, as the proxy's
// default does, but without its log line when the browser itself went away
// (a tab closed, a page left mid-request), which is no error of anyone's
// and would fill the terminal with "http: proxy error: context canceled".
func proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || r.Context().Err() != nil {
		return
	}
	log.Printf("visor dev: Web UI proxy: %s %s: %v", r.Method, r.URL.Path, err)
	w.WriteHeader(http.StatusBadGateway)
}

func (g *hostGuard) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = g.srv.Shutdown(ctx)
}
