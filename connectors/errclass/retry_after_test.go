package errclass

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, true},
		{" 0 ", 0, true},
		{"-3", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"soon", 0, false},
	} {
		h := http.Header{}
		if tc.value != "" {
			h.Set("Retry-After", tc.value)
		}
		got, ok := RetryAfterHeader(h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Retry-After %q: got (%s, %v), want (%s, %v)", tc.value, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRetryAfterOrFallsBackWhenTheAnswerNamesNoWait(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := RetryAfterOr(nil, now, 20*time.Second); got != 20*time.Second {
		t.Errorf("no header: got %s, want the fallback", got)
	}
	h := http.Header{}
	h.Set("Retry-After", "soon")
	if got := RetryAfterOr(h, now, 20*time.Second); got != 20*time.Second {
		t.Errorf("unreadable header: got %s, want the fallback", got)
	}
	h.Set("Retry-After", "0")
	if got := RetryAfterOr(h, now, 20*time.Second); got != 0 {
		t.Errorf("Retry-After 0: got %s, want 0 (the answer's word wins)", got)
	}
}
