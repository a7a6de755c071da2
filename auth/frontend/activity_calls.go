package frontend

import (
	"context"
	"fmt"

	"go.temporal.io/api/workflowservice/v1"
	tokenspb "go.temporal.io/server/api/token/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hanzoai/visor-fleet/contract"
)

// Activities looks up where a workflow's activity runs, for what a call's
// own fields cannot prove (a task token is an unsigned protobuf anyone can
// write). internal/devserver implements it against the server itself.
type Activities interface {
	// ScheduledActivity is the activity ID and task queue of the activity
	// scheduled by event scheduledEventID of the run (a task token names
	// its activity by that event; the server ignores the token's activity
	// ID when it is set).
	ScheduledActivity(ctx context.Context, namespace, workflowID, runID string, scheduledEventID int64) (activityID, taskQueue string, err error)
	// PendingActivity is the task queue of the run's pending activity
	// activityID (the ById calls name it so).
	PendingActivity(ctx context.Context, namespace, workflowID, runID, activityID string) (taskQueue string, err error)
}

// activityCall checks a tenant's heartbeat or completion of an activity:
// the activity must be one its own worker was handed, that is one of its
// own pools' activities scheduled on one of its own tenant queues. A pool's
// activities on the platform's queue (its resync, its gate, its org usage)
// and every other org's are the platform's workers' to answer: a forged
// token failing a watcher's activity froze another org's pools, and one
// completing a resync would feed a pool an observation nobody signed.
func activityCall(ctx context.Context, refuse func(string) error, req any, orgs []string, look Activities, pool func(string) error) (handled bool, err error) {
	type byToken interface {
		GetNamespace() string
		GetTaskToken() []byte
	}
	type byID interface {
		GetNamespace() string
		GetWorkflowId() string
		GetRunId() string
		GetActivityId() string
	}
	switch r := req.(type) {
	case *workflowservice.RecordActivityTaskHeartbeatRequest, *workflowservice.RespondActivityTaskCompletedRequest,
		*workflowservice.RespondActivityTaskFailedRequest, *workflowservice.RespondActivityTaskCanceledRequest:
		t := r.(byToken)
		var tok tokenspb.Task
		if err := proto.Unmarshal(t.GetTaskToken(), &tok); err != nil {
			return true, refuse(fmt.Sprintf("task token does not decode: %v", err))
		}
		if err := pool(tok.GetWorkflowId()); err != nil {
			return true, err
		}
		// A worker's token names its run and scheduled event; one without
		// would let the server pick the activity by an ID nobody checked.
		if tok.GetRunId() == "" || tok.GetScheduledEventId() <= 0 || tok.GetActivityId() == "" {
			return true, refuse(fmt.Sprintf("task token for %s names no run, scheduled event or activity ID: not a token the server handed a worker", tok.GetWorkflowId()))
		}
		if look == nil {
			return true, refuse("the frontend cannot look activities up")
		}
		id, q, err := look.ScheduledActivity(ctx, t.GetNamespace(), tok.GetWorkflowId(), tok.GetRunId(), tok.GetScheduledEventId())
		if err != nil {
			return true, refuse(fmt.Sprintf("task token for %s event %d: %v", tok.GetWorkflowId(), tok.GetScheduledEventId(), err))
		}
		if id != tok.GetActivityId() {
			return true, refuse(fmt.Sprintf("task token for %s names activity %q but event %d scheduled activity %q", tok.GetWorkflowId(), tok.GetActivityId(), tok.GetScheduledEventId(), id))
		}
		return true, ownQueue(refuse, q, tok.GetWorkflowId(), id, orgs)
	case *workflowservice.RecordActivityTaskHeartbeatByIdRequest, *workflowservice.RespondActivityTaskCompletedByIdRequest,
		*workflowservice.RespondActivityTaskFailedByIdRequest, *workflowservice.RespondActivityTaskCanceledByIdRequest:
		b := r.(byID)
		if err := pool(b.GetWorkflowId()); err != nil {
			return true, err
		}
		// Without a run the server picks the current one, which may have
		// changed since the look-up (continue-as-new reuses activity IDs).
		if b.GetRunId() == "" || b.GetActivityId() == "" {
			return true, refuse(fmt.Sprintf("a tenant names the run and activity ID of %s's activity", b.GetWorkflowId()))
		}
		if look == nil {
			return true, refuse("the frontend cannot look activities up")
		}
		q, err := look.PendingActivity(ctx, b.GetNamespace(), b.GetWorkflowId(), b.GetRunId(), b.GetActivityId())
		if err != nil {
			return true, refuse(fmt.Sprintf("activity %q of %s: %v", b.GetActivityId(), b.GetWorkflowId(), err))
		}
		return true, ownQueue(refuse, q, b.GetWorkflowId(), b.GetActivityId(), orgs)
	}
	return false, nil
}

// ownQueue allows an activity scheduled on one of the caller's tenant
// queues.
func ownQueue(refuse func(string) error, queue, workflowID, activityID string, orgs []string) error {
	for _, org := range orgs {
		if contract.IsTenantQueueOf(queue, org) {
			return nil
		}
	}
	return refuse(fmt.Sprintf("activity %q of %s runs on task queue %q, not one of the caller's tenant queues: only the worker polling it may answer it", activityID, workflowID, queue))
}
