package devserver

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	tokenspb "go.temporal.io/server/api/token/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
)

// trustedServer is the embedded server with the authorizer on, and clients
// for a platform administrator and for tenant acme.
type trustedServer struct {
	srv           *Server
	admin, tenant client.Client
	tenantCred    auth.Credential
}

func startTrusted(t *testing.T, edit ...func(*Options)) trustedServer {
	t.Helper()
	now := time.Now()
	issuer, err := auth.GenerateIssuer("dev")
	must(t, err)
	trust := auth.Trust{Issuers: map[string]string{"dev": issuer.Public()}}
	admin, err := auth.NewCredential(issuer, "dev-admin", []string{auth.AllOrgs}, time.Hour, now)
	must(t, err)
	tenant, err := auth.NewCredential(issuer, "mallory@acme", []string{"acme"}, time.Hour, now)
	must(t, err)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := Options{
		DataDir: dir, GRPCPort: freeTestPort(t), UIPort: -1, LogLevel: "error", LogFile: filepath.Join(dir, "temporal.log"),
		Trust: &trust, Credential: &admin, SearchAttributes: starter.SearchAttributeTypes(),
	}
	for _, e := range edit {
		e(&o)
	}
	srv, err := Start(ctx, o)
	must(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	dial := func(cred auth.Credential) client.Client {
		c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace(), Logger: quietLogger{}, HeadersProvider: auth.NewBearerHeaders(cred)})
		must(t, err)
		t.Cleanup(c.Close)
		return c
	}
	return trustedServer{srv: srv, admin: dial(admin), tenant: dial(tenant), tenantCred: tenant}
}

func wantDenied(t *testing.T, what string, err error, says string) {
	t.Helper()
	var denied *serviceerror.PermissionDenied
	if !errors.As(err, &denied) || !strings.Contains(denied.Reason, says) {
		t.Fatalf("%s: err = %v, want PermissionDenied saying %q", what, err, says)
	}
}

// twoQueues is a stand-in for a BYO pool: one activity on the tenant's
// own queue (its worker's to answer) and one on the platform's.
func twoQueues(ctx workflow.Context) error {
	opts := workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}}
	opts.TaskQueue = "tenant-acme"
	own := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), "ReadNodeGroups")
	opts.TaskQueue = contract.DefaultTaskQueue
	platform := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), "Resync")
	if err := own.Get(ctx, nil); err != nil {
		return err
	}
	return platform.Get(ctx, nil)
}

// A tenant's worker answers its own queue's activities and nothing else:
// a token it writes itself (task tokens are unsigned protobuf) for its
// pool's platform activity, or for another org's, is refused, and so is
// the same by ID.
func TestTenantCannotForgeActivityTaskTokens(t *testing.T) {
	s := startTrusted(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := s.srv.Namespace()
	w := worker.New(s.admin, "probe-workflows", worker.Options{})
	w.RegisterWorkflowWithOptions(twoQueues, workflow.RegisterOptions{Name: "TwoQueues"})
	must(t, w.Start())
	defer w.Stop()
	const id = "pool/acme/shop/api/sim/sim-east"
	run, err := s.admin.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "probe-workflows"}, "TwoQueues")
	must(t, err)

	poll := func(c client.Client, queue string) *workflowservice.PollActivityTaskQueueResponse {
		for ctx.Err() == nil {
			resp, err := c.WorkflowService().PollActivityTaskQueue(ctx, &workflowservice.PollActivityTaskQueueRequest{
				Namespace: ns, TaskQueue: &taskqueuepb.TaskQueue{Name: queue}, Identity: "probe"})
			must(t, err)
			if len(resp.GetTaskToken()) > 0 {
				return resp
			}
		}
		t.Fatal("no activity task")
		return nil
	}
	// The platform's worker holds the resync (started, not answered).
	platform := poll(s.admin, contract.DefaultTaskQueue)
	var real tokenspb.Task
	must(t, proto.Unmarshal(platform.GetTaskToken(), &real))
	forge := func(edit func(*tokenspb.Task)) []byte {
		tok := proto.Clone(&real).(*tokenspb.Task)
		edit(tok)
		b, err := proto.Marshal(tok)
		must(t, err)
		return b
	}
	fail := func(token []byte) error {
		_, err := s.tenant.WorkflowService().RespondActivityTaskFailed(ctx, &workflowservice.RespondActivityTaskFailedRequest{
			Namespace: ns, TaskToken: token, Identity: "probe-forged-token",
			Failure: temporal.GetDefaultFailureConverter().ErrorToFailure(errors.New("forged"))})
		return err
	}
	wantDenied(t, "tenant failing its pool's platform activity with a copied token", fail(platform.GetTaskToken()),
		`runs on task queue "visor-fleet", not one of the caller's tenant queues`)
	wantDenied(t, "token naming scheduled event 0 (the server would pick the activity by ID)",
		fail(forge(func(tk *tokenspb.Task) { tk.ScheduledEventId = 0 })), "names no run, scheduled event or activity ID")
	wantDenied(t, "token naming another org's pool",
		fail(forge(func(tk *tokenspb.Task) { tk.WorkflowId = "pool/globex/ml/infer/sim/sim-east" })), "belongs to org globex")
	wantDenied(t, "token naming a cluster's watcher",
		fail(forge(func(tk *tokenspb.Task) { tk.WorkflowId = "cluster/sim-east" })), "is not a pool")
	_, err = s.tenant.WorkflowService().RecordActivityTaskHeartbeat(ctx, &workflowservice.RecordActivityTaskHeartbeatRequest{Namespace: ns, TaskToken: platform.GetTaskToken()})
	wantDenied(t, "tenant heartbeating the platform's activity", err, "runs on task queue")
	_, err = s.tenant.WorkflowService().RespondActivityTaskCompletedById(ctx, &workflowservice.RespondActivityTaskCompletedByIdRequest{
		Namespace: ns, WorkflowId: id, RunId: run.GetRunID(), ActivityId: real.GetActivityId()})
	wantDenied(t, "tenant completing the platform's activity by ID", err, `runs on task queue "visor-fleet"`)

	// Its own queue's activity it answers, by the token it was handed.
	own := poll(s.tenant, "tenant-acme")
	var ownTok tokenspb.Task
	must(t, proto.Unmarshal(own.GetTaskToken(), &ownTok))
	wantDenied(t, "token naming its own activity's ID but the platform's scheduled event",
		fail(forge(func(tk *tokenspb.Task) { tk.ActivityId = ownTok.GetActivityId() })), "but event")
	_, err = s.tenant.WorkflowService().RecordActivityTaskHeartbeat(ctx, &workflowservice.RecordActivityTaskHeartbeatRequest{Namespace: ns, TaskToken: own.GetTaskToken()})
	must(t, err)
	_, err = s.tenant.WorkflowService().RespondActivityTaskCompleted(ctx, &workflowservice.RespondActivityTaskCompletedRequest{Namespace: ns, TaskToken: own.GetTaskToken(), Identity: "tenant-worker"})
	must(t, err)

	// The platform's activity is still the platform worker's: nothing the
	// tenant sent failed it.
	desc, err := s.admin.DescribeWorkflowExecution(ctx, id, run.GetRunID())
	must(t, err)
	if len(desc.GetPendingActivities()) != 1 || desc.GetPendingActivities()[0].GetActivityType().GetName() != "Resync" ||
		desc.GetPendingActivities()[0].GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
		t.Fatalf("pending activities after the forgeries: %+v", desc.GetPendingActivities())
	}
	_, err = s.admin.WorkflowService().RespondActivityTaskCompleted(ctx, &workflowservice.RespondActivityTaskCompletedRequest{Namespace: ns, TaskToken: platform.GetTaskToken()})
	must(t, err)
	must(t, run.Get(ctx, nil))
}

// A tenant's start of its own pool may not choose what the platform owns:
// search attributes other than the pool's key, memo, retry policy, cron,
// timeouts, start delay, a terminating conflict or reuse policy. What
// `visor pool apply` sends passes.
func TestTenantStartOptionsAreThePlatforms(t *testing.T) {
	s := startTrusted(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const id = "pool/acme/shop/api/sim/sim-east"
	start := func(edit func(*client.StartWorkflowOptions)) error {
		o := client.StartWorkflowOptions{ID: id, TaskQueue: contract.DefaultTaskQueue}
		edit(&o)
		_, err := s.tenant.ExecuteWorkflow(ctx, o, contract.PoolWorkflow, contract.PoolStart{})
		return err
	}
	kw := temporal.NewSearchAttributeKeyKeyword
	for _, c := range []struct {
		what string
		edit func(*client.StartWorkflowOptions)
		says string
	}{
		{"listed under another org", func(o *client.StartWorkflowOptions) {
			o.TypedSearchAttributes = temporal.NewSearchAttributes(kw(contract.SAOrg).ValueSet("globex"))
		}, `VisorOrg = "globex": pool ` + id + ` must say "acme"`},
		{"a size it does not have", func(o *client.StartWorkflowOptions) {
			o.TypedSearchAttributes = temporal.NewSearchAttributes(temporal.NewSearchAttributeKeyInt64(contract.SATargetNodes).ValueSet(500))
		}, "VisorTargetNodes is the pool's to publish"},
		{"a memo claiming a cost", func(o *client.StartWorkflowOptions) { o.Memo = map[string]any{contract.MemoPoolHourlyCost: 1000} }, "start option memo"},
		{"a retry policy (the retried run would carry state)", func(o *client.StartWorkflowOptions) {
			o.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 3}
		}, "start option retry_policy"},
		{"a cron schedule", func(o *client.StartWorkflowOptions) { o.CronSchedule = "@hourly" }, "start option cron_schedule"},
		{"a run timeout", func(o *client.StartWorkflowOptions) { o.WorkflowRunTimeout = time.Minute }, "start option workflow_run_timeout"},
		{"an execution timeout", func(o *client.StartWorkflowOptions) { o.WorkflowExecutionTimeout = time.Minute }, "start option workflow_execution_timeout"},
		{"a start delay", func(o *client.StartWorkflowOptions) { o.StartDelay = time.Hour }, "start option workflow_start_delay"},
		{"terminating its running pool", func(o *client.StartWorkflowOptions) {
			o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		}, "would terminate the running pool"},
		{"terminating by reuse policy", func(o *client.StartWorkflowOptions) {
			o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING
		}, "would terminate the running pool"},
	} {
		wantDenied(t, "tenant start with "+c.what, start(c.edit), c.says)
	}
	// The options `visor pool apply` sends are allowed (the start itself
	// then waits for a worker nobody runs here).
	spec := contract.PoolSpec{}
	spec.Key.Org, spec.Key.Project, spec.Key.Service, spec.Key.Provider, spec.Key.Cluster = "acme", "shop", "api", "sim", "sim-east"
	if err := start(func(o *client.StartWorkflowOptions) {
		*o = starter.PoolStartOptions(spec, "", enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL)
	}); err != nil {
		t.Fatalf("tenant start with the starter's own options: %v", err)
	}

	// A cluster's status names every org's pools: a tenant gets the status
	// without them.
	_, err := s.tenant.QueryWorkflow(ctx, "cluster/sim-east", "", contract.QueryClusterStatus)
	wantDenied(t, "tenant querying a cluster's full status", err, `a tenant queries a cluster's "public-status"`)
	var notFound *serviceerror.NotFound
	if _, err := s.tenant.QueryWorkflow(ctx, "cluster/sim-east", "", contract.QueryClusterPublic); !errors.As(err, &notFound) {
		t.Fatalf("tenant querying a cluster's public status: err = %v, want NotFound (allowed, not there)", err)
	}
}
