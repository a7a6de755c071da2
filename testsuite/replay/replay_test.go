// Package replay proves that today's workflow code replays the histories
// recorded from earlier versions: any change to a workflow's command
// sequence must go behind workflow.GetVersion, or these tests fail.
package replay

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/workflows"
)

func TestReplayHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories under testdata/: run make replay-record")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.PoolWorkflow, workflow.RegisterOptions{Name: contract.PoolWorkflow})
			r.RegisterWorkflowWithOptions(workflows.ClusterWorkflow, workflow.RegisterOptions{Name: contract.ClusterWorkflow})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("%s no longer replays: %v", f, err)
			}
		})
	}
}
