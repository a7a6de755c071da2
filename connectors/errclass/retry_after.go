package errclass

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfterHeader reads the standard Retry-After header (RFC 9110: delay
// seconds or an HTTP date) relative to now. ok is false when the header is
// absent or unreadable, so a connector can fall back to its provider's own
// rate-limit headers.
func RetryAfterHeader(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// RetryAfterOr is how long a throttled answer asks to wait: its
// Retry-After header (h may be nil), or fallback, the provider's usual
// refill time, when it names none.
func RetryAfterOr(h http.Header, now time.Time, fallback time.Duration) time.Duration {
	if d, ok := RetryAfterHeader(h, now); ok {
		return d
	}
	return fallback
}
