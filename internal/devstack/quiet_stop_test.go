package devstack

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
)

func TestQuietStopDropsCancellationNoiseOnlyWhileStopping(t *testing.T) {
	var b bytes.Buffer
	q := newQuietStop(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelWarn}))
	log := slog.New(q).With("Namespace", "default")
	canceled := errors.New("context canceled")

	log.Error("Activity error.", "Error", canceled)
	log.Warn("Failed to poll for task.", "Error", canceled)
	if got := bytes.Count(b.Bytes(), []byte("\n")); got != 2 {
		t.Fatalf("before Stop every record prints, got %d lines:\n%s", got, b.String())
	}
	b.Reset()
	q.stopping.Store(true)
	log.Error("Activity error.", "Error", canceled)
	log.Warn("Failed to poll for task.", "Error", canceled)
	log.Warn("anything at warn")
	if b.Len() != 0 {
		t.Fatalf("while stopping, cancellation noise printed:\n%s", b.String())
	}
	log.Error("save fleet state", "error", errors.New("disk full"))
	if !bytes.Contains(b.Bytes(), []byte("disk full")) {
		t.Fatalf("a real error while stopping was dropped")
	}
}
