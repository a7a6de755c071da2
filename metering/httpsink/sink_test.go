package httpsink

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/metering"
	"github.com/hanzoai/visor-fleet/metering/meteringtest"
)

const testToken = "tok-9f3c2a7e-never-print-me"

// recorder is an httptest server that answers each request with the next
// scripted reply and remembers what it saw.
type recorder struct {
	mu       sync.Mutex
	requests []seenRequest
	replies  []func(w http.ResponseWriter, r *http.Request)
}

type seenRequest struct {
	at            time.Time
	auth, key, ct string
	batch         wireBatch
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	seen := seenRequest{at: time.Now(), auth: r.Header.Get("Authorization"),
		key: r.Header.Get("Idempotency-Key"), ct: r.Header.Get("Content-Type")}
	_ = json.Unmarshal(body, &seen.batch)
	rec.mu.Lock()
	n := len(rec.requests)
	rec.requests = append(rec.requests, seen)
	reply := rec.replies[min(n, len(rec.replies)-1)]
	rec.mu.Unlock()
	reply(w, r)
}

func (rec *recorder) seen() []seenRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seenRequest(nil), rec.requests...)
}

func status(code int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// newTestSink starts a server with the scripted replies and a sink reading
// the token from an environment reference.
func newTestSink(t *testing.T, cfg Config, replies ...func(http.ResponseWriter, *http.Request)) (*Sink, *recorder, string) {
	t.Helper()
	rec := &recorder{replies: replies}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	t.Setenv("VISOR_TEST_METER_TOKEN", testToken)
	cfg.Endpoint = srv.URL + "/v1/meter-events"
	cfg.Token = "env:VISOR_TEST_METER_TOKEN"
	if cfg.Backoff == 0 {
		cfg.Backoff, cfg.MaxBackoff = 5*time.Millisecond, 20*time.Millisecond
	}
	if cfg.RetryBudget == 0 {
		cfg.RetryBudget = 5 * time.Second
	}
	s, err := New(cfg, nil)
	require.NoError(t, err)
	return s, rec, cfg.Endpoint
}

func TestHTTPSinkRetries500ThenSucceeds(t *testing.T) {
	s, rec, _ := newTestSink(t, Config{}, status(500), status(503), status(200))
	events := meteringtest.DayOfEvents(t, meteringtest.Pool, 2)
	require.NoError(t, s.Report(context.Background(), events))
	seen := rec.seen()
	require.Len(t, seen, 3)
	for _, r := range seen {
		require.Equal(t, "Bearer "+testToken, r.auth)
		require.Equal(t, "application/json", r.ct)
		require.Equal(t, BatchKey(events), r.key, "every attempt carries the same key")
		require.Equal(t, events, r.batch.Events)
	}
}

func TestHTTPSinkRetriesATimeout(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		w.WriteHeader(200)
	}
	s, rec, _ := newTestSink(t, Config{Timeout: 100 * time.Millisecond}, slow, status(204))
	start := time.Now()
	require.NoError(t, s.Report(context.Background(), meteringtest.DayOfEvents(t, meteringtest.Pool, 1)))
	require.Len(t, rec.seen(), 2)
	require.Less(t, time.Since(start), time.Second, "the first attempt was cut at the client timeout")
}

func TestHTTPSinkHonours429RetryAfter(t *testing.T) {
	limited := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	s, rec, _ := newTestSink(t, Config{}, limited, status(200))
	require.NoError(t, s.Report(context.Background(), meteringtest.DayOfEvents(t, meteringtest.Pool, 1)))
	seen := rec.seen()
	require.Len(t, seen, 2)
	gap := seen[1].at.Sub(seen[0].at)
	require.GreaterOrEqual(t, gap, time.Second, "waited the server's Retry-After, not the 5ms backoff")
	require.Less(t, gap, 2*time.Second)
}

func TestHTTPSink429BeyondBudgetIsRetryableLater(t *testing.T) {
	limited := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusTooManyRequests)
	}
	s, rec, _ := newTestSink(t, Config{RetryBudget: time.Second}, limited)
	start := time.Now()
	err := s.Report(context.Background(), meteringtest.DayOfEvents(t, meteringtest.Pool, 1))
	require.Less(t, time.Since(start), 500*time.Millisecond, "no point sleeping past the budget")
	require.Len(t, rec.seen(), 1)
	require.Equal(t, errclass.Retryable, errclass.Of(err))
	require.Equal(t, 120*time.Second, errclass.RetryAfterOf(err), "the hint reaches Temporal's retry")
}

func TestHTTPSink400IsPermanentAndNotRetried(t *testing.T) {
	// The server echoes the Authorization header, as a careless one might.
	echo := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "bad batch; you sent "+r.Header.Get("Authorization"))
	}
	s, rec, endpoint := newTestSink(t, Config{}, echo)
	err := s.Report(context.Background(), meteringtest.DayOfEvents(t, meteringtest.Pool, 1))
	require.Len(t, rec.seen(), 1)
	var ce *errclass.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, errclass.Permanent, ce.Class)
	require.Contains(t, err.Error(), "400")
	require.Contains(t, err.Error(), endpoint)
	require.Contains(t, err.Error(), "bad batch")
	require.NotContains(t, err.Error(), testToken)
}

func TestHTTPSinkGivesUpAfterBudgetAsRetryable(t *testing.T) {
	s, rec, _ := newTestSink(t, Config{RetryBudget: 300 * time.Millisecond}, status(502))
	start := time.Now()
	err := s.Report(context.Background(), meteringtest.DayOfEvents(t, meteringtest.Pool, 1))
	require.Less(t, time.Since(start), time.Second)
	require.Greater(t, len(rec.seen()), 2)
	require.Equal(t, errclass.Retryable, errclass.Of(err))
	require.ErrorContains(t, err, "502")
	require.ErrorContains(t, err, "budget")
	require.NotContains(t, err.Error(), testToken)
}

func TestHTTPSinkMissingTokenIsPermanentWithoutSending(t *testing.T) {
	s, rec, _ := newTestSink(t, Config{}, status(200))
	s.cfg.Token = "env:VISOR_TEST_METER_TOKEN_UNSET"
	err := s.Report(context.Background(), meteringtest.DayOfEvents(t, meteringtest.Pool, 1))
	require.True(t, errclass.IsPermanent(err))
	require.ErrorContains(t, err, "VISOR_TEST_METER_TOKEN_UNSET")
	require.Empty(t, rec.seen())
	require.NoError(t, s.Report(context.Background(), nil), "nothing to send sends nothing")
	require.Empty(t, rec.seen())
}

func TestBatchKeyIgnoresOrder(t *testing.T) {
	events := meteringtest.DayOfEvents(t, meteringtest.Pool, 3)
	reversed := append([]metering.Event(nil), events...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	require.Equal(t, BatchKey(events), BatchKey(reversed))
	require.NotEqual(t, BatchKey(events), BatchKey(events[:2]))
}

func TestNewHTTPSinkRejectsBadConfig(t *testing.T) {
	ok := Config{Endpoint: "https://meter.example.internal/v1", Token: "env:T"}
	for name, tc := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"empty endpoint":   {func(c *Config) { c.Endpoint = "" }, "endpoint is empty"},
		"scheme":           {func(c *Config) { c.Endpoint = "ftp://x/y" }, "must be http:// or https://"},
		"no host":          {func(c *Config) { c.Endpoint = "https:///v1" }, "has no host"},
		"userinfo":         {func(c *Config) { c.Endpoint = "https://u:p@x/v1" }, "must not carry credentials"},
		"literal token":    {func(c *Config) { c.Token = "sk_live_abc" }, "must be a reference"},
		"user only":        {func(c *Config) { c.Endpoint = "https://sk_live_abc@x/v1" }, "must not carry credentials"},
		"query token":      {func(c *Config) { c.Endpoint = "https://x/v1?access_token=sk_live_abc" }, `query parameter "access_token" looks like one`},
		"query api key":    {func(c *Config) { c.Endpoint = "https://x/v1?tenant=a&API_KEY=sk_live_abc" }, `query parameter "API_KEY" looks like one`},
		"query signature":  {func(c *Config) { c.Endpoint = "https://x/v1?X-Amz-Signature=sk_live_abc" }, "must not carry credentials"},
		"negative":         {func(c *Config) { c.Timeout = -time.Second }, "timeout -1s is negative"},
		"backoff order":    {func(c *Config) { c.Backoff, c.MaxBackoff = time.Second, time.Millisecond }, "below backoff"},
		"unknown ref kind": {func(c *Config) { c.Token = "vault:x" }, "must be a reference"},
	} {
		cfg := ok
		tc.edit(&cfg)
		_, err := New(cfg, nil)
		require.ErrorContains(t, err, tc.want, name)
		require.NotContains(t, err.Error(), "sk_live_abc", name)
	}
	_, err := New(ok, nil)
	require.NoError(t, err)
}

// The budget bounds the whole Report, even an attempt still waiting on the
// server, and the error still names the server's last real answer.
func TestHTTPSinkBudgetCutsAHangingAttempt(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}
	s, rec, _ := newTestSink(t, Config{RetryBudget: 300 * time.Millisecond, Timeout: 10 * time.Second}, status(502), hang)
	start := time.Now()
	err := s.Report(context.Background(), meteringtest.DayOfEvents(t, meteringtest.Pool, 1))
	require.Less(t, time.Since(start), time.Second)
	require.Len(t, rec.seen(), 2)
	require.Equal(t, errclass.Retryable, errclass.Of(err))
	require.ErrorContains(t, err, "502")
}
