// Package frontend decides which Temporal frontend calls a tenant caller
// may make. The pool workflow refuses a signed request for another org's
// pool, but calls that never reach a workflow's code — terminate, reset,
// cancel, delete, a start under another org's pool ID, a signal to a
// cluster — must be refused at the frontend, by the server's Authorizer
// (internal/devserver/auth.go wires it; a production server does the same).
package frontend

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/hanzoai/visor-fleet/types"
)

// TenantMay says whether a caller whose certificate names only orgs may
// make this call (method is the gRPC full method name, req the decoded
// request); the error names the call and why it is refused.
//
// A tenant may read the namespace's lists, read, update and query its
// own orgs' pools, start and signal them, read and update clusters (the
// cluster's update validators then accept only its owner org or an
// administrator), and run activity workers for its own BYO task queues.
// Anything else — terminate, cancel, reset, delete, batch operations,
// schedules, other orgs' pools, starting or signalling a cluster —
// is refused.
func TenantMay(method string, req any, orgs []string) error {
	name := method[strings.LastIndex(method, "/")+1:]
	refuse := func(why string) error { return fmt.Errorf("%s: %s", name, why) }
	pool := func(id string) error {
		k, err := types.ParsePoolID(id)
		if err != nil {
			return refuse(fmt.Sprintf("workflow %q is not a pool", id))
		}
		if !slices.Contains(orgs, k.Org) {
			return refuse(fmt.Sprintf("pool %s belongs to org %s, not to the caller's %s", id, k.Org, strings.Join(orgs, ", ")))
		}
		return nil
	}
	poolOrCluster := func(id string) error {
		if strings.HasPrefix(id, "cluster/") && len(id) > len("cluster/") {
			return nil
		}
		return pool(id)
	}
	switch r := req.(type) {
	case *workflowservice.GetSystemInfoRequest, *workflowservice.DescribeNamespaceRequest,
		*workflowservice.GetClusterInfoRequest, *workflowservice.GetSearchAttributesRequest,
		*workflowservice.ListWorkflowExecutionsRequest, *workflowservice.CountWorkflowExecutionsRequest:
		return nil
	case *workflowservice.StartWorkflowExecutionRequest:
		return pool(r.GetWorkflowId())
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		return pool(r.GetWorkflowId())
	case *workflowservice.SignalWorkflowExecutionRequest:
		return pool(r.GetWorkflowExecution().GetWorkflowId())
	case *workflowservice.GetWorkflowExecutionHistoryRequest:
		return pool(r.GetExecution().GetWorkflowId())
	case *workflowservice.GetWorkflowExecutionHistoryReverseRequest:
		return pool(r.GetExecution().GetWorkflowId())
	case *workflowservice.DescribeWorkflowExecutionRequest:
		return poolOrCluster(r.GetExecution().GetWorkflowId())
	case *workflowservice.QueryWorkflowRequest:
		return poolOrCluster(r.GetExecution().GetWorkflowId())
	case *workflowservice.UpdateWorkflowExecutionRequest:
		return poolOrCluster(r.GetWorkflowExecution().GetWorkflowId())
	case *workflowservice.PollWorkflowExecutionUpdateRequest:
		return poolOrCluster(r.GetUpdateRef().GetWorkflowExecution().GetWorkflowId())
	case *workflowservice.ExecuteMultiOperationRequest:
		// Update-with-start (pool apply): the start and the update name
		// the same pool.
		for _, op := range r.GetOperations() {
			if s := op.GetStartWorkflow(); s != nil {
				if err := pool(s.GetWorkflowId()); err != nil {
					return err
				}
			}
			if u := op.GetUpdateWorkflow(); u != nil {
				if err := pool(u.GetWorkflowExecution().GetWorkflowId()); err != nil {
					return err
				}
			}
		}
		return nil
	case *workflowservice.PollActivityTaskQueueRequest, *workflowservice.RecordActivityTaskHeartbeatRequest,
		*workflowservice.RespondActivityTaskCompletedRequest, *workflowservice.RespondActivityTaskFailedRequest,
		*workflowservice.RespondActivityTaskCanceledRequest:
		// A tenant's BYO-cloud worker runs the provider activities of its
		// own task queue; the task token names the activity it answers.
		return nil
	}
	return refuse("not a call a tenant may make (only platform administrators terminate, cancel, reset or delete workflows, run batch operations or schedules)")
}
