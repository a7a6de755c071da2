package testsuite

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// EnvInt is the whole number in the environment variable name, def when
// it is unset; a value below least, or not a number, fails the test.
func EnvInt(t testing.TB, name string, def, least int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < least {
		t.Fatalf("%s=%q: want a whole number of at least %d", name, s, least)
	}
	return n
}

// EnvDuration is the duration in the environment variable name ("3m"),
// def when it is unset; a negative or unparsable value fails the test.
func EnvDuration(t testing.TB, name string, def time.Duration) time.Duration {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		t.Fatalf("%s=%q: want a duration like 3m", name, s)
	}
	return d
}
