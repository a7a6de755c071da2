package main

import (
	"strings"
	"testing"
)

// A negative sticky cache is refused before the worker dials anything,
// naming the flag (the SDK would take it as "no cache" and replay every
// pool's history on each task).
func TestWorkerRefusesANegativeStickyCache(t *testing.T) {
	_, _, err := visor(t, "worker", "--sticky-cache-size", "-1")
	if err == nil || !strings.Contains(err.Error(), "--sticky-cache-size -1") {
		t.Fatalf("err = %v, want the flag named", err)
	}
}
