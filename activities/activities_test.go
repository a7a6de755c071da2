package activities

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestAsTemporalErrorTypesByClass(t *testing.T) {
	for _, tc := range []struct {
		err          error
		typ          string
		nonRetryable bool
	}{
		{errclass.New(errclass.Permanent, "aws", "New", errors.New("bad key")), "Permanent", true},
		{errclass.New(errclass.NotFound, "aws", "DeleteNodes", errors.New("no group")), "NotFound", true},
		{fmt.Errorf("plan: %w", errclass.New(errclass.InsufficientCapacity, "aws", "CreateNodeGroup", errors.New("none left"))), "InsufficientCapacity", true},
		{errclass.New(errclass.RateLimited, "hetzner", "SetTargetSize", nil), "RateLimited", false},
		{errors.New("connection reset"), "Retryable", false},
	} {
		err := asTemporalError(tc.err)
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) {
			t.Fatalf("%v: not an application error: %T", tc.err, err)
		}
		if appErr.Type() != tc.typ || appErr.NonRetryable() != tc.nonRetryable {
			t.Errorf("%v: type %s non-retryable %t, want %s %t", tc.err, appErr.Type(), appErr.NonRetryable(), tc.typ, tc.nonRetryable)
		}
		if !errors.Is(err, tc.err) && errclass.Of(errors.Unwrap(err)) != errclass.Of(tc.err) {
			t.Errorf("%v: the cause is lost", tc.err)
		}
	}
	// The workflows' retry policies list exactly the non-retryable classes.
	for _, class := range errclass.NonRetryable {
		var appErr *temporal.ApplicationError
		errors.As(asTemporalError(errclass.New(errclass.Class(class), "p", "op", nil)), &appErr)
		if !appErr.NonRetryable() {
			t.Errorf("%s is in errclass.NonRetryable but retried", class)
		}
	}
}

func TestAsTemporalErrorHonoursRetryAfterAndPassesOthersThrough(t *testing.T) {
	limited := &errclass.Error{Class: errclass.RateLimited, Provider: "hetzner", Op: "SetTargetSize", RetryAfter: 7 * time.Second}
	var appErr *temporal.ApplicationError
	if !errors.As(asTemporalError(limited), &appErr) || appErr.NextRetryDelay() != 7*time.Second {
		t.Fatalf("retry-after not carried: %v", appErr)
	}
	if asTemporalError(nil) != nil {
		t.Fatal("nil became an error")
	}
	already := temporal.NewNonRetryableApplicationError("x", "Custom", nil)
	if asTemporalError(already) != already {
		t.Fatal("an application error is wrapped again")
	}
	for _, ctxErr := range []error{context.Canceled, fmt.Errorf("observe: %w", context.DeadlineExceeded)} {
		if asTemporalError(ctxErr) != ctxErr {
			t.Errorf("%v: a context error must stay one, so Temporal sees the cancellation", ctxErr)
		}
	}
}

// countingObserver counts samples and returns a new ObservedAt each time.
type countingObserver struct{ calls atomic.Int32 }

func (o *countingObserver) ObserveCluster(context.Context) (connectors.ClusterObservation, error) {
	n := o.calls.Add(1)
	return connectors.ClusterObservation{Cluster: "east", ObservedAt: time.Unix(int64(n), 0)}, nil
}

type failingObserver struct{ calls atomic.Int32 }

func (o *failingObserver) ObserveCluster(context.Context) (connectors.ClusterObservation, error) {
	o.calls.Add(1)
	return connectors.ClusterObservation{}, errors.New("apiserver down")
}

func TestObservationCacheSharesOneSamplePerClusterBriefly(t *testing.T) {
	ctx := context.Background()
	a := &Activities{}
	east, west := &countingObserver{}, &countingObserver{}
	first, err := a.observeCluster(ctx, connectors.Cluster{ID: "east", Observer: east})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		again, err := a.observeCluster(ctx, connectors.Cluster{ID: "east", Observer: east})
		if err != nil || !again.ObservedAt.Equal(first.ObservedAt) {
			t.Fatalf("pools resyncing together should share one sample: %v, %v", again.ObservedAt, err)
		}
	}
	if _, err := a.observeCluster(ctx, connectors.Cluster{ID: "west", Observer: west}); err != nil || east.calls.Load() != 1 || west.calls.Load() != 1 {
		t.Fatalf("one sample per cluster: east %d, west %d (%v)", east.calls.Load(), west.calls.Load(), err)
	}

	// Past the TTL the cluster is sampled afresh.
	a.cacheMu.Lock()
	hit := a.cache["east"]
	hit.at = hit.at.Add(-observationCacheTTL)
	a.cache["east"] = hit
	a.cacheMu.Unlock()
	fresh, err := a.observeCluster(ctx, connectors.Cluster{ID: "east", Observer: east})
	if err != nil || fresh.ObservedAt.Equal(first.ObservedAt) || east.calls.Load() != 2 {
		t.Fatalf("expired entry served: %v, %d calls, %v", fresh.ObservedAt, east.calls.Load(), err)
	}

	// Failures are not cached: the next call samples again.
	failing := &failingObserver{}
	for range 2 {
		if _, err := a.observeCluster(ctx, connectors.Cluster{ID: "north", Observer: failing}); err == nil {
			t.Fatal("a failed sample reported success")
		}
	}
	if failing.calls.Load() != 2 {
		t.Fatalf("a failed sample was cached: %d calls", failing.calls.Load())
	}

	_, err = a.observeCluster(ctx, connectors.Cluster{ID: "blind"})
	if !errclass.IsPermanent(err) {
		t.Fatalf("a cluster without an observer: %v, want Permanent", err)
	}
}
