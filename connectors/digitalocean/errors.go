package digitalocean

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/digitalocean/godo"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// defaultRateLimitWait is used when a 429 names no moment to come back;
// DigitalOcean's per-minute burst limit clears within a minute.
const defaultRateLimitWait = 15 * time.Second

// classify maps a godo failure onto the connector error classes. Messages
// name the credential reference on auth failures, never the token.
func (p *Provider) classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var apiErr *godo.ErrorResponse
	if !errors.As(err, &apiErr) || apiErr.Response == nil {
		// No answer at all (connection refused, timeout): transient.
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	}
	status := apiErr.Response.StatusCode
	switch {
	case status == http.StatusTooManyRequests:
		e := errclass.New(errclass.RateLimited, ProviderName, op, err)
		e.RetryAfter = rateLimitWait(apiErr.Response.Header, time.Now())
		return e
	case status >= 500:
		return errclass.New(errclass.Retryable, ProviderName, op, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return errclass.New(errclass.Permanent, ProviderName, op,
			fmt.Errorf("the token from %s was refused (HTTP %d): %w", p.cfg.Credentials, status, err))
	case status == http.StatusNotFound:
		return errclass.New(errclass.NotFound, ProviderName, op, err)
	case status == http.StatusUnprocessableEntity && sizeUnavailable(apiErr.Message):
		return errclass.New(errclass.InsufficientCapacity, ProviderName, op, err)
	default:
		return errclass.New(errclass.Permanent, ProviderName, op, err)
	}
}

// rateLimitWait prefers Retry-After, then RateLimit-Reset (Unix seconds
// at which the oldest counted request expires, per the API reference).
func rateLimitWait(h http.Header, now time.Time) time.Duration {
	if d, ok := errclass.RetryAfterHeader(h, now); ok {
		return d
	}
	if secs, err := strconv.ParseInt(h.Get("RateLimit-Reset"), 10, 64); err == nil {
		if d := time.Unix(secs, 0).Sub(now); d > 0 {
			return d.Round(time.Second)
		}
	}
	return defaultRateLimitWait
}

// sizeUnavailable recognises a 422 that refuses the size for lack of
// stock in the region, which sizing answers with the next size.
func sizeUnavailable(message string) bool {
	m := strings.ToLower(message)
	return strings.Contains(m, "capacity") ||
		(strings.Contains(m, "size") && (strings.Contains(m, "not available") || strings.Contains(m, "unavailable")))
}
