// Package frontend decides which Temporal frontend calls a tenant caller
// may make. The pool workflow refuses a signed request for another org's
// pool, but calls that never reach a workflow's code — terminate, reset,
// cancel, delete, a start under another org's pool ID, a signal to a
// cluster — must be refused at the frontend, by the server's Authorizer
// (internal/devserver/auth.go wires it; a production server does the same).
package frontend

import (
	"context"
	"fmt"
	"slices"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// TenantMay says whether a caller whose certificate names only orgs may
// make this call (method is the gRPC full method name, req the decoded
// request); the error names the call and why it is refused. look finds
// where an activity a heartbeat or completion names runs.
//
// A tenant may list and count its own orgs' pools and the clusters (a
// query limited to them: see listScoped), read, update and query its own
// orgs' pools, start and signal them, read and update clusters (the
// cluster's update validators then accept only its owner org or an
// administrator), and run activity workers for its own BYO task queues.
// What it sets on a start is checked too (startOptions): the start's
// options are the platform's. Anything else — terminate, cancel, reset, delete, batch operations,
// schedules, other orgs' pools, starting or signalling a cluster —
// is refused.
func TenantMay(ctx context.Context, method string, req any, orgs []string, look Activities) error {
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
	// A tenant starts only pool workflows, under its own pools' IDs (the
	// pool workflow checks that its spec is the pool its ID names), with
	// no option the platform owns.
	start := func(r startRequest) error {
		id := r.GetWorkflowId()
		if t := r.GetWorkflowType().GetName(); t != contract.PoolWorkflow {
			return refuse(fmt.Sprintf("workflow type %q: a tenant starts only %s", t, contract.PoolWorkflow))
		}
		if err := pool(id); err != nil {
			return err
		}
		if err := startOptions(r, id); err != nil {
			return refuse(err.Error())
		}
		return nil
	}
	if handled, err := activityCall(ctx, refuse, req, orgs, look, pool); handled {
		return err
	}
	switch r := req.(type) {
	case *workflowservice.GetSystemInfoRequest, *workflowservice.DescribeNamespaceRequest,
		*workflowservice.GetClusterInfoRequest, *workflowservice.GetSearchAttributesRequest:
		return nil
	case *workflowservice.ListWorkflowExecutionsRequest, *workflowservice.CountWorkflowExecutionsRequest:
		if err := listScoped(r.(interface{ GetQuery() string }).GetQuery(), orgs); err != nil {
			return refuse(err.Error())
		}
		return nil
	case *workflowservice.StartWorkflowExecutionRequest:
		return start(r)
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		return start(r)
	case *workflowservice.SignalWorkflowExecutionRequest:
		return pool(r.GetWorkflowExecution().GetWorkflowId())
	case *workflowservice.GetWorkflowExecutionHistoryRequest:
		return pool(r.GetExecution().GetWorkflowId())
	case *workflowservice.GetWorkflowExecutionHistoryReverseRequest:
		return pool(r.GetExecution().GetWorkflowId())
	case *workflowservice.DescribeWorkflowExecutionRequest:
		return poolOrCluster(r.GetExecution().GetWorkflowId())
	case *workflowservice.QueryWorkflowRequest:
		// A cluster's status names every org's pools on it: a tenant asks
		// for the status without them.
		if id := r.GetExecution().GetWorkflowId(); strings.HasPrefix(id, "cluster/") {
			if q := r.GetQuery().GetQueryType(); q != contract.QueryClusterPublic {
				return refuse(fmt.Sprintf("query %q of %s may show other orgs' pools: a tenant queries a cluster's %q", q, id, contract.QueryClusterPublic))
			}
		}
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
				if err := start(s); err != nil {
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
	case *workflowservice.PollActivityTaskQueueRequest:
		// A tenant's BYO-cloud worker runs the provider activities of its
		// own queue, never the platform's: a poller on another queue could
		// answer other pools' provider reads and provisioning with lies.
		return tenantQueue(refuse, r.GetTaskQueue().GetName(), orgs)
	case *workflowservice.RecordWorkerHeartbeatRequest, *workflowservice.ShutdownWorkerRequest:
		// Heartbeats and completions of activities: activityCall.
		return nil
	}
	return refuse("not a call a tenant may make (only platform administrators terminate, cancel, reset or delete workflows, run batch operations or schedules)")
}

// startRequest is what the three kinds of start have in common.
type startRequest interface {
	proto.Message
	GetWorkflowId() string
	GetWorkflowType() *commonpb.WorkflowType
}

// tenantQueue allows a queue named for one of the caller's orgs.
func tenantQueue(refuse func(string) error, queue string, orgs []string) error {
	for _, org := range orgs {
		if contract.IsTenantQueueOf(queue, org) {
			return nil
		}
	}
	return refuse(fmt.Sprintf("task queue %q is not one of the caller's (%s<org> or %s<org>-…, for org %s)", queue, contract.TenantQueuePrefix, contract.TenantQueuePrefix, strings.Join(orgs, ", ")))
}
