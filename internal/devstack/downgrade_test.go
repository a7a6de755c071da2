package devstack

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/internal/release"
	"github.com/hanzoai/visor-fleet/workers"
	"github.com/hanzoai/visor-fleet/workflows"
)

// futureWorkflow stands for a pool run by a newer release: it records a
// change ID this binary does not know, at a version above any it records.
func futureWorkflow(ctx workflow.Context) error {
	workflow.GetVersion(ctx, "from-the-future", workflow.DefaultVersion, 2)
	return workflow.Await(ctx, func() bool { return false })
}

// A data directory whose running workflows a newer release wrote: visor
// dev of this binary refuses to start its worker, naming the workflow, the
// change, the newer release and its own; a change ID it knows, or one it
// records, is no refusal.
func TestDowngradeRefused(t *testing.T) {
	dir := t.TempDir()
	spec, key := onePool("sim-downgrade")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startOn(ctx, t, dir, spec)
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()

	const newer = "v9.9.9"
	w := worker.New(s.Client, "future", worker.Options{Identity: "1@elsewhere@visor/" + newer})
	w.RegisterWorkflowWithOptions(futureWorkflow, workflow.RegisterOptions{Name: "future"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	const futureID = "pool/acme/shop/api/sim/from-a-newer-release"
	if _, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: futureID, TaskQueue: "future"}, "future"); err != nil {
		t.Fatal(err)
	}
	ns := s.Server.Namespace()
	// Visibility trails the histories: wait until both runs show their markers.
	var refused *workers.DowngradeError
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		older := slices.DeleteFunc(slices.Clone(workflows.Changes), func(c workflows.Change) bool { return c.ID == "law-replace" })
		err := workers.CheckDowngrade(ctx, s.Client, ns, older)
		if errors.As(err, &refused) && len(refused.Refusals) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want two refusals (the future run, and the pool for a binary without law-replace), got %v", err)
		}
	}
	w.Stop()
	// The pool's own run, checked by a binary before law-replace: refused,
	// naming this release as its writer.
	pool := refused.Refusals[1] // sorted by workflow ID
	if pool.WorkflowID != key.WorkflowID() || pool.Change != "law-replace-1" || pool.WrittenBy != release.Current().Release {
		t.Errorf("the pool's refusal: %+v", pool)
	}
	future := refused.Refusals[0]
	if future.WorkflowID != futureID || future.Change != "from-the-future-2" || future.WrittenBy != newer {
		t.Errorf("the future run's refusal: %+v", future)
	}
	// Knowing the change at its version: no refusal; at a lower one: refused.
	withFuture := append(slices.Clone(workflows.Changes), workflows.Change{ID: "from-the-future", Max: 2, Release: newer})
	if err := workers.CheckDowngrade(ctx, s.Client, ns, withFuture); err != nil {
		t.Errorf("a binary that records from-the-future up to 2: %v", err)
	}
	withFuture[len(withFuture)-1].Max = 1
	if err := workers.CheckDowngrade(ctx, s.Client, ns, withFuture); err == nil || !strings.Contains(err.Error(), "above version 1") {
		t.Errorf("a binary that records from-the-future up to 1: %v", err)
	}

	stopped = true
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	// This binary on the same data directory: refused before its worker starts.
	_, err := startErr(ctx, t, dir, spec)
	if !errors.As(err, &refused) {
		t.Fatalf("restart on a newer release's data: want a *DowngradeError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"downgrade refused", futureID, "from-the-future-2", "release " + newer, "this binary is release " + release.Current().Release, "nothing was changed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if len(refused.Refusals) != 1 {
		t.Errorf("refusals: %+v, want only the future run", refused.Refusals)
	}
}
