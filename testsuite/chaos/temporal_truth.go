package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// maxRunsRead bounds how many workflow runs (current and continued-as-new)
// the reader walks, so a runaway Continue-As-New cannot hang the check.
const maxRunsRead = 500

// runTruth is one workflow run and what its history shows.
type runTruth struct {
	WorkflowID, RunID, Type string
	Status                  enumspb.WorkflowExecutionStatus
	Start                   time.Time
	Events                  int
	// TaskFailures are WorkflowTaskFailed events: a workflow task the
	// worker could not complete, as a nondeterministic replay or a panic
	// makes (and, harmlessly, a signal racing the task's completion).
	TaskFailures []taskFailure
	// TaskTimeouts are WorkflowTaskTimedOut events: a worker took the
	// task and vanished (what kill -9 does).
	TaskTimeouts     int
	ActivityFailures int
	ActivityTimeouts int
	HistoryErr       string
}

// openTruth is a running workflow as DescribeWorkflowExecution shows it.
type openTruth struct {
	WorkflowID, RunID string
	// TaskAttempt is the pending workflow task's attempt, 0 when none.
	TaskAttempt int32
	Activities  []pendingActivity
	DescribeErr string
}

type taskFailure struct {
	EventID int64
	Cause   enumspb.WorkflowTaskFailedCause
	Message string
}

type pendingActivity struct {
	Type        string
	State       enumspb.PendingActivityState
	Attempt     int32
	LastFailure string
	Heartbeat   time.Time
}

// poolReading is one pool's status query.
type poolReading struct {
	Status *contract.PoolStatus
	Err    string
}

// poolsReading is the pools' status queries and open runs (pools' and
// clusters'), read together so they can be compared with the provider.
type poolsReading struct {
	Status map[string]poolReading
	Open   map[string]openTruth // by workflow ID
	ReadAt time.Time
}

// dialDev connects as the dev admin, with the codec keys, as the CLI does.
func dialDev(ctx context.Context, dataDir string, grpcPort int) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	return starter.Dial(ctx, starter.ConnectOptions{
		Address: fmt.Sprintf("127.0.0.1:%d", grpcPort), Namespace: "default",
		Credential: "file:" + filepath.Join(abs, devstack.AdminCredentialFile),
		CodecKeys:  "file:" + filepath.Join(abs, devstack.CodecKeysFile),
	})
}

// readPools queries every pool's status and describes every open run.
func readPools(ctx context.Context, c client.Client, pools []types.PoolKey, clusters []string) poolsReading {
	status := map[string]poolReading{}
	open := map[string]openTruth{}
	readAt := time.Now()
	for _, id := range clusters {
		open[types.ClusterWorkflowID(id)] = describe(ctx, c, types.ClusterWorkflowID(id))
	}
	for _, k := range pools {
		id := k.WorkflowID()
		qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		st, err := starter.PoolStatus(qctx, c, k)
		cancel()
		if err != nil {
			status[id] = poolReading{Err: err.Error()}
		} else {
			status[id] = poolReading{Status: &st}
		}
		open[id] = describe(ctx, c, id)
	}
	return poolsReading{Status: status, Open: open, ReadAt: readAt}
}

func describe(ctx context.Context, c client.Client, id string) openTruth {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	o := openTruth{WorkflowID: id}
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		o.DescribeErr = err.Error()
		return o
	}
	o.RunID = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	if wt := d.GetPendingWorkflowTask(); wt != nil {
		o.TaskAttempt = wt.GetAttempt()
	}
	for _, a := range d.GetPendingActivities() {
		pa := pendingActivity{
			Type: a.GetActivityType().GetName(), State: a.GetState(),
			Attempt: a.GetAttempt(), LastFailure: a.GetLastFailure().GetMessage(),
		}
		if hb := a.GetLastHeartbeatTime(); hb != nil {
			pa.Heartbeat = hb.AsTime()
		}
		o.Activities = append(o.Activities, pa)
	}
	return o
}

// readRuns reads every run of the pool and cluster workflows ever
// started, closed ones too, each with what its history shows.
func readRuns(ctx context.Context, c client.Client) ([]runTruth, error) {
	var runs []runTruth
	query := fmt.Sprintf("WorkflowType = '%s' OR WorkflowType = '%s'", contract.PoolWorkflow, contract.ClusterWorkflow)
	var token []byte
	for {
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := c.ListWorkflow(lctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: "default", Query: query, NextPageToken: token, PageSize: 200,
		})
		cancel()
		if err != nil {
			return runs, fmt.Errorf("list workflows (%s): %w", query, err)
		}
		for _, e := range resp.GetExecutions() {
			if len(runs) >= maxRunsRead {
				return runs, fmt.Errorf("more than %d workflow runs: not reading them all", maxRunsRead)
			}
			r := runTruth{
				WorkflowID: e.GetExecution().GetWorkflowId(), RunID: e.GetExecution().GetRunId(),
				Type: e.GetType().GetName(), Status: e.GetStatus(), Start: e.GetStartTime().AsTime(),
			}
			readHistory(ctx, c, &r)
			runs = append(runs, r)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	sort.Slice(runs, func(i, j int) bool {
		if runs[i].WorkflowID != runs[j].WorkflowID {
			return runs[i].WorkflowID < runs[j].WorkflowID
		}
		return runs[i].Start.Before(runs[j].Start)
	})
	return runs, nil
}

// readHistory counts what went wrong in one run's history.
func readHistory(ctx context.Context, c client.Client, r *runTruth) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, r.WorkflowID, r.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			r.HistoryErr = err.Error()
			return
		}
		r.Events++
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			a := ev.GetWorkflowTaskFailedEventAttributes()
			r.TaskFailures = append(r.TaskFailures, taskFailure{EventID: ev.GetEventId(), Cause: a.GetCause(), Message: a.GetFailure().GetMessage()})
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			r.TaskTimeouts++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			r.ActivityFailures++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			r.ActivityTimeouts++
		}
	}
}
