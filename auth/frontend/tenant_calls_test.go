package frontend

import (
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
)

const svc = "/temporal.api.workflowservice.v1.WorkflowService/"

var poolType = &commonpb.WorkflowType{Name: "PoolWorkflow"}

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
		{"RespondActivityTaskCompletedById", &workflowservice.RespondActivityTaskCompletedByIdRequest{WorkflowId: other}, false, "belongs to org globex"},
		{"RespondActivityTaskFailedById", &workflowservice.RespondActivityTaskFailedByIdRequest{WorkflowId: own}, true, ""},
		{"RecordActivityTaskHeartbeatById", &workflowservice.RecordActivityTaskHeartbeatByIdRequest{WorkflowId: "cluster/east"}, false, "is not a pool"},
		{"PollWorkflowTaskQueue", &workflowservice.PollWorkflowTaskQueueRequest{}, false, "not a call a tenant may make"},
	}
	for _, c := range cases {
		err := TenantMay(svc+c.method, c.req, acme)
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
