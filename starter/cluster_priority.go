package starter

import (
	"context"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// RaiseClusterPriority gives a running cluster workflow that lacks it the
// task priority new enrollments start with (contract.ClusterPriorityKey).
// A cluster enrolled before that started at the default and, at 10,000
// pools, starved behind its pools' first tasks; enrolling again does not
// restart it, so this changes the running workflow's options instead.
// Temporal keeps the priority across continue-as-new (the new run takes
// the previous run's), so one call lasts. It reports whether it changed
// anything; a cluster that is not running is an error.
func RaiseClusterPriority(ctx context.Context, c client.Client, namespace, clusterID, identity string) (raised bool, err error) {
	id := types.ClusterWorkflowID(clusterID)
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return false, fmt.Errorf("cluster %s: describe %s: %w", clusterID, id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return false, fmt.Errorf("cluster %s: its workflow is %s, not running", clusterID, info.GetStatus())
	}
	if info.GetPriority().GetPriorityKey() == contract.ClusterPriorityKey {
		return false, nil
	}
	if err := SetClusterPriority(ctx, c, namespace, clusterID, contract.ClusterPriorityKey, identity); err != nil {
		return false, err
	}
	return true, nil
}

// SetClusterPriority sets a running cluster workflow's task priority key
// (1, first, to 5). It changes the current run, not a described one: a
// continue-as-new in between would otherwise leave the new run as it was.
func SetClusterPriority(ctx context.Context, c client.Client, namespace, clusterID string, key int32, identity string) error {
	_, err := c.WorkflowService().UpdateWorkflowExecutionOptions(ctx, &workflowservice.UpdateWorkflowExecutionOptionsRequest{
		Namespace:                namespace,
		WorkflowExecution:        &commonpb.WorkflowExecution{WorkflowId: types.ClusterWorkflowID(clusterID)},
		WorkflowExecutionOptions: &workflowpb.WorkflowExecutionOptions{Priority: &commonpb.Priority{PriorityKey: key}},
		UpdateMask:               &fieldmaskpb.FieldMask{Paths: []string{"priority.priority_key"}},
		Identity:                 identity,
	})
	if err != nil {
		return fmt.Errorf("cluster %s: set its task priority to %d: %w", clusterID, key, err)
	}
	return nil
}
