package devstack

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
)

// quietStop wraps the stack's log handler so that stopping is silent: once
// Stop begins, the worker's in-flight activities and pollers end with
// "context canceled", which the SDK reports as warnings and errors though
// nothing went wrong. Those records, and every warning, are dropped from
// then on; a real error that does not come from the cancellation still
// prints.
type quietStop struct {
	next     slog.Handler
	stopping *atomic.Bool
}

func newQuietStop(next slog.Handler) *quietStop {
	return &quietStop{next: next, stopping: &atomic.Bool{}}
}

func (q *quietStop) Enabled(ctx context.Context, l slog.Level) bool { return q.next.Enabled(ctx, l) }

func (q *quietStop) Handle(ctx context.Context, r slog.Record) error {
	if q.stopping.Load() && (r.Level < slog.LevelError || fromCancellation(r)) {
		return nil
	}
	return q.next.Handle(ctx, r)
}

func (q *quietStop) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &quietStop{next: q.next.WithAttrs(attrs), stopping: q.stopping}
}

func (q *quietStop) WithGroup(name string) slog.Handler {
	return &quietStop{next: q.next.WithGroup(name), stopping: q.stopping}
}

// fromCancellation reports whether the record is about a context that was
// canceled or a worker that is shutting down.
func fromCancellation(r slog.Record) bool {
	hit := strings.Contains(r.Message, "context canceled") || strings.Contains(r.Message, "shutting down")
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.String()
		if strings.Contains(v, "context canceled") || strings.Contains(v, "canceled") || strings.Contains(v, "worker is stopping") {
			hit = true
			return false
		}
		return true
	})
	return hit
}
