// Package httpsink delivers meter events to a commerce metering endpoint
// over HTTP, with a bearer token read from a credential reference on the
// worker and retries within a budget. The events come from package
// metering.
package httpsink

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/connectors/credentials"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/metering"
)

// Sink posts events to a commerce metering endpoint.
//
// Wire format, one request per batch:
//
//	POST <Endpoint>
//	Authorization: Bearer <token>
//	Content-Type: application/json
//	Idempotency-Key: visor-meter-<hex SHA-256 of the events' idempotency keys, sorted, "\n"-joined>
//
//	{"events": [{
//	  "meterId": "visor.node-hours",
//	  "userId": "<org>",
//	  "tier": "managed",
//	  "project": "…", "poolId": "pool/…", "provider": "…", "cluster": "…", "size": "…",
//	  "value": 1.5,
//	  "hour": "2025-03-01T10:00:00Z",
//	  "idempotency": "pool/<org>/<project>/<service>/<provider>/<cluster>/<size>/2025-03-01T10",
//	  "dimensions": {"service": "…", "project": "…", "provider": "…", "cluster": "…", "size": "…", "pool": "pool/…", "tier": "managed"}
//	}]}
//
// A bring-your-own pool's hour is one "visor.management-plane.pool-hours"
// event (tier "byo", no size, value the part of the hour the pool existed,
// key "<pool ID>/<hour>/management-plane", dimension "nodeHours" for
// information). docs/metering.md has every field.
//
// Any 2xx means every event in the batch is recorded. The receiver must
// dedupe on each event's "idempotency" (the batch key only short-cuts an
// identical resend). 429, 408, 5xx and transport errors are retried with
// backoff inside RetryBudget, honouring Retry-After; any other status is
// a Permanent error.
type Sink struct {
	cfg      Config
	endpoint string
	secrets  credentials.SecretReader
}

var _ metering.Sink = (*Sink)(nil)

// Config configures an Sink. Zero durations take the defaults.
type Config struct {
	Endpoint string
	// Token references the bearer token; it is resolved on each Report,
	// inside the activity, and never logged or put in an error.
	Token credentials.Ref
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// Client sends the requests (default: a new http.Client).
	Client *http.Client
	// RetryBudget bounds all attempts and waits of one Report (default
	// 30s); past it Report returns a Retryable error for Temporal to retry
	// later. The activity's start-to-close timeout must exceed it.
	RetryBudget time.Duration
	// Backoff is the first wait between attempts, doubled each time up to
	// MaxBackoff (defaults 200ms and 5s).
	Backoff    time.Duration
	MaxBackoff time.Duration
}

const (
	defaultHTTPTimeout = 10 * time.Second
	defaultRetryBudget = 30 * time.Second
	defaultBackoff     = 200 * time.Millisecond
	defaultMaxBackoff  = 5 * time.Second
)

// New checks cfg and fills its defaults. secrets reads secret:
// references and may be nil when the token comes from env: or file:.
func New(cfg Config, secrets credentials.SecretReader) (*Sink, error) {
	u, err := url.Parse(cfg.Endpoint)
	switch {
	case cfg.Endpoint == "":
		return nil, errors.New("metering endpoint is empty")
	case err != nil:
		return nil, fmt.Errorf("metering endpoint %q is not a URL: %w", cfg.Endpoint, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("metering endpoint %q must be http:// or https://", cfg.Endpoint)
	case u.Host == "":
		return nil, fmt.Errorf("metering endpoint %q has no host", cfg.Endpoint)
	case u.User != nil:
		// Not u.Redacted(): it keeps the user name, which is often the token.
		return nil, fmt.Errorf("metering endpoint %s://%s%s must not carry credentials in its user part (not shown); reference the token in token", u.Scheme, u.Host, u.Path)
	}
	if name := credentialParam(u); name != "" {
		return nil, fmt.Errorf("metering endpoint %s://%s%s must not carry credentials: its query parameter %q looks like one (the value is not shown); reference the token in token", u.Scheme, u.Host, u.Path, name)
	}
	if kind, rest, ok := strings.Cut(string(cfg.Token), ":"); !ok || rest == "" || (kind != "env" && kind != "file" && kind != "secret") {
		return nil, errors.New("metering token must be a reference env:NAME, file:PATH or secret:NAMESPACE/NAME/KEY, not the token itself")
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"timeout", &cfg.Timeout, defaultHTTPTimeout},
		{"retry budget", &cfg.RetryBudget, defaultRetryBudget},
		{"backoff", &cfg.Backoff, defaultBackoff},
		{"max backoff", &cfg.MaxBackoff, defaultMaxBackoff},
	} {
		if *d.v < 0 {
			return nil, fmt.Errorf("metering %s %s is negative", d.name, *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.MaxBackoff < cfg.Backoff {
		return nil, fmt.Errorf("metering max backoff %s is below backoff %s", cfg.MaxBackoff, cfg.Backoff)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &Sink{cfg: cfg, endpoint: u.String(), secrets: secrets}, nil
}

// BatchKey is the Idempotency-Key of a batch: the same events in any order
// give the same key.
func BatchKey(events []metering.Event) string {
	keys := make([]string, len(events))
	for i, e := range events {
		keys[i] = e.Idempotency
	}
	slices.Sort(keys)
	sum := sha256.Sum256([]byte(strings.Join(keys, "\n")))
	return "visor-meter-" + hex.EncodeToString(sum[:])
}

// wireBatch is the request body.
type wireBatch struct {
	Events []metering.Event `json:"events"`
}

// Report posts the batch, retrying transient failures within the budget.
func (s *Sink) Report(ctx context.Context, events []metering.Event) error {
	if len(events) == 0 {
		return nil
	}
	events, err := metering.CheckEvents(events)
	if err != nil {
		return s.fail(errclass.Permanent, err)
	}
	token, err := s.cfg.Token.Resolve(ctx, s.secrets)
	if err != nil {
		return err // Permanent, names the reference only
	}
	batch := wireBatch{Events: make([]metering.Event, len(events))}
	for i, e := range events {
		e.Hour = e.Hour.UTC()
		batch.Events[i] = e
	}
	body, err := json.Marshal(batch)
	if err != nil {
		return s.fail(errclass.Permanent, fmt.Errorf("encode events: %w", err))
	}
	return s.send(ctx, token, BatchKey(events), body)
}

func (s *Sink) fail(class errclass.Class, err error) *errclass.Error {
	return errclass.New(class, "metering", "POST "+s.endpoint, err)
}

// attempt is one request's outcome.
type attempt struct {
	err        error // nil: accepted
	permanent  bool
	retryAfter time.Duration // the server's Retry-After, if any
}

// post makes one request, bounded by the attempt timeout and the budget.
func (s *Sink) post(ctx context.Context, token, key string, body []byte, deadline time.Time) attempt {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	ctx, cancelBudget := context.WithDeadline(ctx, deadline)
	defer cancelBudget()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return attempt{err: err, permanent: true}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return attempt{err: redact(err, token)}
	}
	defer resp.Body.Close()
	snippet := readSnippet(resp, token)
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return attempt{}
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		retryAfter, _ := errclass.RetryAfterHeader(resp.Header, time.Now())
		return attempt{err: fmt.Errorf("endpoint answered %s%s", resp.Status, snippet), retryAfter: retryAfter}
	default:
		return attempt{err: fmt.Errorf("endpoint answered %s%s", resp.Status, snippet), permanent: true}
	}
}

// credentialWords mark a query parameter that carries a secret: a token in
// a URL ends up in proxy logs, error messages and workflow payloads.
var credentialWords = []string{"token", "key", "secret", "password", "passwd", "auth", "sig", "credential", "session"}

// credentialParam names the first query parameter of u that looks like a
// credential, or "".
func credentialParam(u *url.URL) string {
	for name := range u.Query() {
		lower := strings.ToLower(name)
		for _, w := range credentialWords {
			if strings.Contains(lower, w) {
				return name
			}
		}
	}
	return ""
}
