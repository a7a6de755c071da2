package devstack

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// flakyQueries is the stack's real client whose first failures queries of
// each workflow fail as the SDK's query race fails them (Temporal Go SDK
// issue #755).
type flakyQueries struct {
	client.Client
	failures int
	mu       sync.Mutex
	failed   map[string]int
}

func (f *flakyQueries) QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	n := f.failed[workflowID]
	if n < f.failures {
		f.failed[workflowID] = n + 1
	}
	f.mu.Unlock()
	if n < f.failures {
		return nil, serviceerror.NewQueryFailed("[TMPRL1100] invalid state transition: attempted handleInitiatedEvent, state Command_Canceled")
	}
	return f.Client.QueryWorkflow(ctx, workflowID, runID, queryType, args...)
}

// Registering again, as a restarted `visor dev` does, survives queries
// that fail a few times in a row; a cluster that keeps failing is named.
func TestRegisterRetriesFailedQueries(t *testing.T) {
	spec, key := onePool("sim-flaky")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := startOn(ctx, t, t.TempDir(), spec)
	defer func() { _ = s.Stop() }()
	tokens := filepath.Join(s.StateDir, "tokens")

	flaky := &flakyQueries{Client: s.Client, failures: 3, failed: map[string]int{}}
	if err := Register(ctx, flaky, s.Server.Namespace(), spec, tokens); err != nil {
		t.Fatalf("register with failing queries: %v", err)
	}
	for _, id := range []string{types.ClusterWorkflowID("sim-flaky"), key.WorkflowID()} {
		if got := flaky.failed[id]; got != 3 {
			t.Errorf("%s: %d queries failed, want 3 (each retried)", id, got)
		}
	}

	stuck := &flakyQueries{Client: s.Client, failures: 1000, failed: map[string]int{}}
	err := Register(ctx, stuck, s.Server.Namespace(), spec, tokens)
	if err == nil {
		t.Fatal("register passed with a cluster whose every query fails")
	}
	if want := "status of cluster sim-flaky"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "after 8 attempts") {
		t.Fatalf("error %q does not name the cluster and the attempts", err)
	}
}

// A restarted `visor dev` gives a cluster enrolled before cluster
// workflows had a priority of their own that priority.
func TestRegisterRaisesAnOldClusterPriority(t *testing.T) {
	spec, _ := onePool("sim-old")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := startOn(ctx, t, t.TempDir(), spec)
	defer func() { _ = s.Stop() }()
	ns := s.Server.Namespace()
	priority := func() int32 {
		d, err := s.Client.DescribeWorkflowExecution(ctx, types.ClusterWorkflowID("sim-old"), "")
		if err != nil {
			t.Fatal(err)
		}
		return d.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey()
	}
	if err := starter.SetClusterPriority(ctx, s.Client, ns, "sim-old", 3, "test"); err != nil {
		t.Fatal(err)
	}
	if err := Register(ctx, s.Client, ns, spec, filepath.Join(s.StateDir, "tokens")); err != nil {
		t.Fatal(err)
	}
	if got := priority(); got != contract.ClusterPriorityKey {
		t.Fatalf("after registering again the cluster's priority is %d, want %d", got, contract.ClusterPriorityKey)
	}
}
