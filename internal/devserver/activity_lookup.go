package devserver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/auth/frontend"
	"github.com/hanzoai/visor-fleet/contract"
)

// activityLookup answers the authorizer's frontend.Activities (and the
// quotas' frontend.Pools) from the server itself, through its public frontend with the server's own
// credential (a platform caller, so the look-up is not itself looked up).
// A scheduled event never changes, so what one look-up found is kept: a
// tenant worker's heartbeats cost one history read per activity.
type activityLookup struct {
	address, namespace string
	cred               auth.Credential

	mu        sync.Mutex
	svc       workflowservice.WorkflowServiceClient
	scheduled map[scheduledKey]scheduledActivity
}

var (
	_ frontend.Activities = (*activityLookup)(nil)
	_ frontend.Pools      = (*activityLookup)(nil)
)

type scheduledKey struct {
	namespace, workflowID, runID string
	event                        int64
}

type scheduledActivity struct{ id, queue string }

// maxScheduledKept bounds the memory of scheduled events; past it the
// memory starts again (a look-up more, never a wrong answer).
const maxScheduledKept = 10000

func newActivityLookup(address, namespace string, cred auth.Credential) *activityLookup {
	return &activityLookup{address: address, namespace: namespace, cred: cred, scheduled: map[scheduledKey]scheduledActivity{}}
}

// service dials once, on the first look-up (the authorizer is made before
// the server listens).
func (l *activityLookup) service() (workflowservice.WorkflowServiceClient, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.svc != nil {
		return l.svc, nil
	}
	c, err := client.NewLazyClient(client.Options{HostPort: l.address, Namespace: l.namespace, Logger: quietLogger{},
		HeadersProvider: auth.NewBearerHeaders(l.cred)})
	if err != nil {
		return nil, err
	}
	l.svc = c.WorkflowService()
	return l.svc, nil
}

func (l *activityLookup) ScheduledActivity(ctx context.Context, namespace, workflowID, runID string, event int64) (string, string, error) {
	key := scheduledKey{namespace, workflowID, runID, event}
	l.mu.Lock()
	got, ok := l.scheduled[key]
	l.mu.Unlock()
	if ok {
		return got.id, got.queue, nil
	}
	svc, err := l.service()
	if err != nil {
		return "", "", err
	}
	var page []byte
	for {
		resp, err := svc.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace: namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID},
			MaximumPageSize: 1000, NextPageToken: page,
		})
		if err != nil {
			return "", "", fmt.Errorf("read history: %w", err)
		}
		for _, e := range resp.GetHistory().GetEvents() {
			if e.GetEventId() < event {
				continue
			}
			a := e.GetActivityTaskScheduledEventAttributes()
			if e.GetEventId() != event || e.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED || a == nil {
				return "", "", errors.New("that event did not schedule an activity")
			}
			got = scheduledActivity{id: a.GetActivityId(), queue: a.GetTaskQueue().GetName()}
			l.mu.Lock()
			if len(l.scheduled) >= maxScheduledKept {
				clear(l.scheduled)
			}
			l.scheduled[key] = got
			l.mu.Unlock()
			return got.id, got.queue, nil
		}
		if page = resp.GetNextPageToken(); len(page) == 0 {
			return "", "", errors.New("the run has no such event")
		}
	}
}

func (l *activityLookup) PendingActivity(ctx context.Context, namespace, workflowID, runID, activityID string) (string, error) {
	svc, err := l.service()
	if err != nil {
		return "", err
	}
	resp, err := svc.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID}})
	if err != nil {
		return "", fmt.Errorf("describe: %w", err)
	}
	for _, a := range resp.GetPendingActivities() {
		if a.GetActivityId() == activityID {
			return a.GetActivityOptions().GetTaskQueue().GetName(), nil
		}
	}
	return "", errors.New("no such pending activity")
}

func (l *activityLookup) Running(ctx context.Context, namespace, workflowID string) (bool, error) {
	svc, err := l.service()
	if err != nil {
		return false, err
	}
	resp, err := svc.DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: workflowID}})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return resp.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

func (l *activityLookup) RunningPools(ctx context.Context, namespace, org string) (int, error) {
	svc, err := l.service()
	if err != nil {
		return 0, err
	}
	resp, err := svc.CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace,
		Query: fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND %s = '%s'", contract.PoolWorkflow, contract.SAOrg, org)})
	if err != nil {
		return 0, err
	}
	return int(resp.GetCount()), nil
}
