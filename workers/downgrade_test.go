package workers

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/workflows"
)

// listOnly answers ListWorkflow and nothing else.
type listOnly struct {
	client.Client
	err error
}

func (l listOnly) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return &workflowservice.ListWorkflowExecutionsResponse{}, l.err
}

// A tenant's worker may not list the whole namespace: the check says it
// was skipped, distinctly, so `visor worker` warns and starts as before;
// any other error stops it.
func TestCheckDowngradeWithoutListPermission(t *testing.T) {
	err := CheckDowngrade(context.Background(), listOnly{err: serviceerror.NewPermissionDenied("a tenant's query must be limited to its own orgs", "")}, "default", workflows.Changes)
	if !errors.Is(err, ErrDowngradeUnchecked) {
		t.Fatalf("permission denied: want ErrDowngradeUnchecked, got %v", err)
	}
	err = CheckDowngrade(context.Background(), listOnly{err: serviceerror.NewUnavailable("down")}, "default", workflows.Changes)
	if err == nil || errors.Is(err, ErrDowngradeUnchecked) {
		t.Fatalf("unavailable: want an error that stops the worker, got %v", err)
	}
	if err := CheckDowngrade(context.Background(), listOnly{}, "default", workflows.Changes); err != nil {
		t.Fatalf("nothing running: %v", err)
	}
}

func TestSplitChangeVersion(t *testing.T) {
	for _, c := range []struct {
		in   string
		id   string
		v    int
		want bool
	}{
		{"law-replace-1", "law-replace", 1, true},
		{"gate-fanout-activity-12", "gate-fanout-activity", 12, true},
		{"nodash", "", 0, false},
		{"-1", "", 0, false},
		{"x-y", "", 0, false},
	} {
		id, v, ok := splitChangeVersion(c.in)
		if id != c.id || v != c.v || ok != c.want {
			t.Errorf("splitChangeVersion(%q) = %q, %d, %v", c.in, id, v, ok)
		}
	}
	if got := releaseInIdentity("12@host@visor/v0.3.0"); got != "v0.3.0" {
		t.Errorf("releaseInIdentity = %q", got)
	}
	if got := releaseInIdentity("12@host@"); got != "" {
		t.Errorf("releaseInIdentity of an SDK default = %q", got)
	}
}
