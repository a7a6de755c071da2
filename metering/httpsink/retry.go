package httpsink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// send retries post until it succeeds, fails permanently, or the next wait
// would overrun the budget.
func (s *Sink) send(ctx context.Context, token, key string, body []byte) error {
	deadline := time.Now().Add(s.cfg.RetryBudget)
	backoff := s.cfg.Backoff
	var answered attempt // the last attempt that ended on its own, not by the budget
	for n := 1; ; n++ {
		a := s.post(ctx, token, key, body, deadline)
		if a.err == nil {
			return nil
		}
		if a.permanent {
			return s.fail(errclass.Permanent, a.err)
		}
		if ctx.Err() != nil {
			return s.fail(errclass.Retryable, fmt.Errorf("attempt %d: %w (cancelled: %w)", n, a.err, ctx.Err()))
		}
		cut := !time.Now().Before(deadline)
		if !cut || answered.err == nil {
			answered = a
		}
		wait := a.retryAfter
		if wait == 0 {
			// Jitter spreads a thousand pools failing on the same hour.
			wait = backoff/2 + rand.N(backoff/2+1)
			backoff = min(2*backoff, s.cfg.MaxBackoff)
		}
		if cut || time.Now().Add(wait).After(deadline) {
			// Name the server's last real answer, not just "deadline exceeded".
			e := s.fail(errclass.Retryable, fmt.Errorf("gave up after %d attempts within the %s budget: %w", n, s.cfg.RetryBudget, answered.err))
			e.RetryAfter = answered.retryAfter
			return e
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return s.fail(errclass.Retryable, fmt.Errorf("attempt %d: %w (cancelled: %w)", n, a.err, ctx.Err()))
		case <-timer.C:
		}
	}
}

// readSnippet returns the start of an error body for the error message,
// with the token blanked in case the server echoes the request, and drains
// the rest so the connection can be reused.
func readSnippet(resp *http.Response, token string) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return ""
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(b), token, "[redacted]"))
	if s == "" {
		return ""
	}
	return ": " + s
}

// redact blanks the token out of a transport error's text.
func redact(err error, token string) error {
	if !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "[redacted]"))
}
