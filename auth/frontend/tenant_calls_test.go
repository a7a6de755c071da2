package frontend

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	querypb "go.temporal.io/api/query/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	tokenspb "go.temporal.io/server/api/token/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// twoActivities: run r1 scheduled activity 7 (event 5) on tenant-acme and
// activity 8 (event 6) on the platform's queue.
type twoActivities struct{}

func (twoActivities) ScheduledActivity(_ context.Context, _, _, run string, event int64) (string, string, error) {
	switch {
	case run == "r1" && event == 5:
		return "7", "tenant-acme", nil
	case run == "r1" && event == 6:
		return "8", "visor-fleet", nil
	}
	return "", "", errors.New("no such event")
}

func (twoActivities) PendingActivity(_ context.Context, _, _, run, id string) (string, error) {
	switch {
	case run == "r1" && id == "7":
		return "tenant-acme", nil
	case run == "r1" && id == "8":
		return "visor-fleet", nil
	}
	return "", errors.New("no such activity")
}

func token(workflowID, runID string, event int64, activityID string) []byte {
	b, err := proto.Marshal(&tokenspb.Task{NamespaceId: "ns", WorkflowId: workflowID, RunId: runID, ScheduledEventId: event, ActivityId: activityID, Attempt: 1})
	if err != nil {
		panic(err)
	}
	return b
}

const svc = "/temporal.api.workflowservice.v1.WorkflowService/"

var poolType = &commonpb.WorkflowType{Name: "PoolWorkflow"}

func sa(kv ...string) *commonpb.SearchAttributes {
	out := &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{}}
	for i := 0; i+1 < len(kv); i += 2 {
		out.IndexedFields[kv[i]] = &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(kv[i+1])}
	}
	return out
}

func exec(id string) *commonpb.WorkflowExecution { return &commonpb.WorkflowExecution{WorkflowId: id} }

func TestTenantMay(t *testing.T) {
	acme := []string{"acme"}
	own, other := "pool/acme/shop/api/sim/east", "pool/globex/ml/infer/sim/east"
	cases := []struct {
		method string
		req    any
		allow  bool
		says   string
	}{
		{"ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Query: "VisorOrg = 'acme' AND ExecutionStatus = 'Running'"}, true, ""},
		{"ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{}, false, "lists the whole namespace"},
		{"CountWorkflowExecutions", &workflowservice.CountWorkflowExecutionsRequest{Query: "VisorOrg = 'globex'"}, false, "may match other orgs' workflows"},
		{"CountWorkflowExecutions", &workflowservice.CountWorkflowExecutionsRequest{Query: "VisorOrg = 'acme' GROUP BY ExecutionStatus"}, true, ""},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType}, true, ""},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: other, WorkflowType: poolType}, false, "belongs to org globex"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType,
			WorkflowExecutionTimeout: durationpb.New(0), WorkflowRunTimeout: durationpb.New(0), WorkflowTaskTimeout: durationpb.New(10 * time.Second),
			Priority: &commonpb.Priority{}, SearchAttributes: sa("VisorOrg", `"acme"`, "VisorState", `"starting"`)}, true, ""},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, SearchAttributes: sa("VisorOrg", `"globex"`)}, false, `start search attribute VisorOrg = "globex": pool pool/acme/shop/api/sim/east must say "acme"`},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, SearchAttributes: sa("VisorTargetNodes", `500`)}, false, "start search attribute VisorTargetNodes is the pool's to publish"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{"hourlyCost": {Data: []byte("1000")}}}}, false, "start option memo is the platform's"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, RetryPolicy: &commonpb.RetryPolicy{MaximumAttempts: 3}}, false, "start option retry_policy is the platform's"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, CronSchedule: "* * * * *"}, false, "start option cron_schedule"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, WorkflowRunTimeout: durationpb.New(time.Minute)}, false, "start option workflow_run_timeout"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, WorkflowExecutionTimeout: durationpb.New(time.Minute)}, false, "start option workflow_execution_timeout"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, WorkflowStartDelay: durationpb.New(time.Hour)}, false, "start option workflow_start_delay"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, RequestEagerExecution: true}, false, "start option request_eager_execution"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, LastCompletionResult: &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte("{}")}}}}, false, "start option last_completion_result"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, WorkflowIdConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING}, false, "would terminate the running pool"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, WorkflowIdReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING}, false, "would terminate the running pool"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, WorkflowTaskTimeout: durationpb.New(time.Hour)}, false, "workflow_task_timeout 1h0m0s is longer"},
		{"SignalWithStartWorkflowExecution", &workflowservice.SignalWithStartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, SignalName: "observe", RetryPolicy: &commonpb.RetryPolicy{MaximumAttempts: 2}}, false, "start option retry_policy"},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: "cluster/east", WorkflowType: poolType}, false, `"cluster/east" is not a pool`},
		{"StartWorkflowExecution", &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: &commonpb.WorkflowType{Name: "ClusterWorkflow"}}, false, `workflow type "ClusterWorkflow": a tenant starts only PoolWorkflow`},
		{"SignalWithStartWorkflowExecution", &workflowservice.SignalWithStartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: &commonpb.WorkflowType{Name: "Other"}}, false, "a tenant starts only PoolWorkflow"},
		{"SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{WorkflowExecution: exec(own)}, true, ""},
		{"SignalWorkflowExecution", &workflowservice.SignalWorkflowExecutionRequest{WorkflowExecution: exec("cluster/east")}, false, "is not a pool"},
		{"UpdateWorkflowExecution", &workflowservice.UpdateWorkflowExecutionRequest{WorkflowExecution: exec("cluster/east")}, true, ""},
		{"UpdateWorkflowExecution", &workflowservice.UpdateWorkflowExecutionRequest{WorkflowExecution: exec(other)}, false, "belongs to org globex"},
		{"PollWorkflowExecutionUpdate", &workflowservice.PollWorkflowExecutionUpdateRequest{UpdateRef: &updatepb.UpdateRef{WorkflowExecution: exec(own)}}, true, ""},
		{"QueryWorkflow", &workflowservice.QueryWorkflowRequest{Execution: exec(other)}, false, "belongs to org globex"},
		{"GetWorkflowExecutionHistory", &workflowservice.GetWorkflowExecutionHistoryRequest{Execution: exec("cluster/east")}, false, "is not a pool"},
		{"ExecuteMultiOperation", &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType}}},
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_UpdateWorkflow{UpdateWorkflow: &workflowservice.UpdateWorkflowExecutionRequest{WorkflowExecution: exec(own)}}},
		}}, true, ""},
		{"ExecuteMultiOperation", &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: &workflowservice.StartWorkflowExecutionRequest{WorkflowId: other, WorkflowType: poolType}}},
		}}, false, "belongs to org globex"},
		{"ExecuteMultiOperation", &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: &workflowservice.StartWorkflowExecutionRequest{WorkflowId: own, WorkflowType: poolType, CronSchedule: "@hourly"}}},
		}}, false, "start option cron_schedule"},
		{"TerminateWorkflowExecution", &workflowservice.TerminateWorkflowExecutionRequest{WorkflowExecution: exec(own)}, false, "TerminateWorkflowExecution: not a call a tenant may make"},
		{"ResetWorkflowExecution", &workflowservice.ResetWorkflowExecutionRequest{WorkflowExecution: exec(own)}, false, "not a call a tenant may make"},
		{"RequestCancelWorkflowExecution", &workflowservice.RequestCancelWorkflowExecutionRequest{WorkflowExecution: exec(own)}, false, "not a call a tenant may make"},
		{"DeleteWorkflowExecution", &workflowservice.DeleteWorkflowExecutionRequest{WorkflowExecution: exec(own)}, false, "not a call a tenant may make"},
		{"StartBatchOperation", &workflowservice.StartBatchOperationRequest{}, false, "not a call a tenant may make"},
		{"PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: "tenant-acme"}}, true, ""},
		{"PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: "tenant-acme-eu"}}, true, ""},
		{"PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: "visor-fleet"}}, false, `task queue "visor-fleet" is not one of the caller's`},
		{"PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: "tenant-acmecorp"}}, false, "is not one of the caller's"},
		{"PollActivityTaskQueue", &workflowservice.PollActivityTaskQueueRequest{TaskQueue: &taskqueuepb.TaskQueue{Name: "tenant-globex"}}, false, "is not one of the caller's"},
		{"RespondActivityTaskCompletedById", &workflowservice.RespondActivityTaskCompletedByIdRequest{WorkflowId: other, RunId: "r1", ActivityId: "7"}, false, "belongs to org globex"},
		{"RespondActivityTaskFailedById", &workflowservice.RespondActivityTaskFailedByIdRequest{WorkflowId: own, RunId: "r1", ActivityId: "7"}, true, ""},
		{"RespondActivityTaskFailedById", &workflowservice.RespondActivityTaskFailedByIdRequest{WorkflowId: own, ActivityId: "7"}, false, "names the run and activity ID"},
		{"RespondActivityTaskFailedById", &workflowservice.RespondActivityTaskFailedByIdRequest{WorkflowId: own, RunId: "r1", ActivityId: "8"}, false, `runs on task queue "visor-fleet"`},
		{"RecordActivityTaskHeartbeatById", &workflowservice.RecordActivityTaskHeartbeatByIdRequest{WorkflowId: "cluster/east"}, false, "is not a pool"},
		{"RespondActivityTaskCompleted", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: token(own, "r1", 5, "7")}, true, ""},
		{"RecordActivityTaskHeartbeat", &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: token(own, "r1", 5, "7")}, true, ""},
		{"RespondActivityTaskFailed", &workflowservice.RespondActivityTaskFailedRequest{TaskToken: token(other, "r1", 5, "7")}, false, "belongs to org globex"},
		{"RespondActivityTaskFailed", &workflowservice.RespondActivityTaskFailedRequest{TaskToken: token("cluster/east", "r1", 5, "7")}, false, "is not a pool"},
		{"RespondActivityTaskFailed", &workflowservice.RespondActivityTaskFailedRequest{TaskToken: token(own, "r1", 0, "7")}, false, "names no run, scheduled event or activity ID"},
		{"RespondActivityTaskFailed", &workflowservice.RespondActivityTaskFailedRequest{TaskToken: token(own, "r1", 6, "8")}, false, `runs on task queue "visor-fleet"`},
		{"RespondActivityTaskCanceled", &workflowservice.RespondActivityTaskCanceledRequest{TaskToken: token(own, "r1", 6, "7")}, false, `names activity "7" but event 6 scheduled activity "8"`},
		{"RespondActivityTaskCompleted", &workflowservice.RespondActivityTaskCompletedRequest{TaskToken: []byte("\xff\xff")}, false, "task token does not decode"},
		{"QueryWorkflow", &workflowservice.QueryWorkflowRequest{Execution: exec("cluster/east"), Query: &querypb.WorkflowQuery{QueryType: "status"}}, false, `a tenant queries a cluster's "public-status"`},
		{"QueryWorkflow", &workflowservice.QueryWorkflowRequest{Execution: exec("cluster/east"), Query: &querypb.WorkflowQuery{QueryType: "public-status"}}, true, ""},
		{"QueryWorkflow", &workflowservice.QueryWorkflowRequest{Execution: exec(own), Query: &querypb.WorkflowQuery{QueryType: "status"}}, true, ""},
		{"PollWorkflowTaskQueue", &workflowservice.PollWorkflowTaskQueueRequest{}, false, "not a call a tenant may make"},
	}
	for _, c := range cases {
		err := TenantMay(context.Background(), svc+c.method, c.req, acme, twoActivities{})
		if c.allow && err != nil {
			t.Errorf("%s: refused: %v", c.method, err)
		}
		if !c.allow && (err == nil || !strings.Contains(err.Error(), c.says)) {
			t.Errorf("%s: err = %v, want a refusal saying %q", c.method, err, c.says)
		}
	}
}

func TestTenantListsOnlyItsOwnOrgs(t *testing.T) {
	orgs := []string{"acme", "initech"}
	for _, c := range []struct {
		query string
		allow bool
	}{
		{"VisorOrg = 'acme'", true},
		{"`VisorOrg` = 'acme'", true},
		{"VisorOrg IN ('acme', 'initech') AND ExecutionStatus = 'Running'", true},
		{"WorkflowType = 'PoolWorkflow' AND VisorOrg = 'initech' ORDER BY StartTime DESC", true},
		{"ExecutionStatus = 'Running' AND (VisorService = 'api' OR VisorOrg = 'x') AND VisorOrg = 'acme'", true},
		{"(VisorOrg = 'acme' AND VisorProject = 'shop') OR VisorOrg = 'initech'", true},
		{"WorkflowType = 'ClusterWorkflow' AND ExecutionStatus = 'Running'", true},

		{"", false},
		{"   ", false},
		{"ORDER BY StartTime", false},
		{"WorkflowType = 'PoolWorkflow'", false},
		{"VisorOrg = 'globex'", false},
		{"VisorOrg != 'acme'", false},
		{"VisorOrg IN ('acme', 'globex')", false},
		{"VisorOrg = 'acme' OR VisorOrg = 'globex'", false},
		{"VisorOrg = 'acme' OR ExecutionStatus = 'Running'", false},
		{"NOT VisorOrg = 'acme'", false},
		{"'acme' = VisorOrg", false},
		{"VisorOrg STARTS_WITH 'ac'", false},
		{"visororg = 'acme'", false},
		{"VisorOrg = 'acme') OR (WorkflowType = 'PoolWorkflow'", false},
		{"VisorOrg = 'acme' OR (WorkflowType = 'ClusterWorkflow')", true},
		{"WorkflowType = 'PoolWorkflow' OR WorkflowType = 'ClusterWorkflow'", false},
		{"VisorOrg = acme", false},
	} {
		err := listScoped(c.query, orgs)
		if (err == nil) != c.allow {
			t.Errorf("query %q: allowed %v, want %v (err %v)", c.query, err == nil, c.allow, err)
		}
		if err != nil && !strings.Contains(err.Error(), "VisorOrg = 'acme' AND") {
			t.Errorf("query %q: error %q does not say how to fix the query", c.query, err)
		}
	}
}
