package starter

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// ApplyResult says what ApplyPool did.
type ApplyResult string

const (
	PoolCreated   ApplyResult = "created"
	PoolUpdated   ApplyResult = "policy updated"
	PoolUnchanged ApplyResult = "unchanged"
)

// ApplyPool registers a pool, or updates its policy, idempotently: the
// same spec twice changes nothing, and a changed policy goes through the
// set-policy validator. It uses update-with-start, so the pool is started
// if absent and updated if running, in one call. The pool is checked
// against its cluster (enrolled, provider, placement) first.
func ApplyPool(ctx context.Context, c client.Client, spec contract.PoolSpec, taskQueue string) (ApplyResult, error) {
	// The policy is taken as given: spec files fill defaults when they are
	// read (see ParseSpecFile), and a zero the caller wrote stays zero.
	res, _, err := applyOne(ctx, c, spec, taskQueue, false)
	return res, err
}

// ApplySpecPool is ApplyPool for a spec file's entry: a pool already
// running keeps its own expireAfter when the entry does not write one
// (PoolEntry.ExpiryDefaulted).
func ApplySpecPool(ctx context.Context, c client.Client, e PoolEntry, taskQueue string) (ApplyResult, error) {
	res, _, err := applyOne(ctx, c, e.PoolSpec, taskQueue, e.ExpiryDefaulted)
	return res, err
}

func applyOne(ctx context.Context, c client.Client, spec contract.PoolSpec, taskQueue string, keepExpiry bool) (ApplyResult, types.Duration, error) {
	if err := spec.Validate(); err != nil {
		return "", 0, fmt.Errorf("%s: %w", spec.Key.WorkflowID(), err)
	}
	if err := CheckPlacement(ctx, c, spec); err != nil {
		return "", 0, err
	}
	running, err := isRunning(ctx, c, spec.Key.WorkflowID())
	if err != nil {
		return "", 0, err
	}
	return applyChecked(ctx, c, spec, taskQueue, running, keepExpiry)
}

// applyChecked applies a pool already checked against its cluster;
// running says whether its workflow is known to be open. A running pool
// whose policy differs gets the set-policy update (validated by the pool).
// keepExpiry: the spec's expireAfter is only the default, which a running
// pool does not take (its own stays, off for pools from before expiry):
// turning it on for a pool of old nodes would make them all due at once.
// It returns the expireAfter the pool has afterwards.
func applyChecked(ctx context.Context, c client.Client, spec contract.PoolSpec, taskQueue string, running, keepExpiry bool) (ApplyResult, types.Duration, error) {
	id := spec.Key.WorkflowID()
	if !running {
		// A new pool starts with its policy in its input: no update to
		// wait for, and the pool announces itself to its cluster once.
		created, err := startPool(ctx, c, spec, taskQueue)
		if err != nil {
			return "", 0, err
		}
		if created {
			return PoolCreated, spec.Policy.ExpireAfter, nil
		}
		// Started meanwhile, or listed late: update it like a running one.
	}
	st, err := PoolStatus(ctx, c, spec.Key)
	if err != nil {
		return "", 0, fmt.Errorf("status of %s: %w", id, err)
	}
	if keepExpiry {
		spec.Policy.ExpireAfter = st.Policy.ExpireAfter
	}
	if reflect.DeepEqual(st.Policy, spec.Policy) {
		return PoolUnchanged, spec.Policy.ExpireAfter, nil
	}
	policyReq := contract.SetPolicyRequest{Policy: spec.Policy}
	if policyReq.Auth, err = authorize(c, id, contract.UpdateSetPolicy, policyReq, nil); err != nil {
		return "", 0, err
	}
	// Update-with-start, so a pool that completed since it was listed is
	// started again rather than the update failing.
	start := c.NewWithStartWorkflowOperation(PoolStartOptions(spec, taskQueue, enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING),
		contract.PoolWorkflow, contract.PoolStart{Spec: spec})
	handle, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			WorkflowID:   id,
			UpdateName:   contract.UpdateSetPolicy,
			Args:         []any{policyReq},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err != nil {
		return "", 0, fmt.Errorf("apply %s: %w", id, err)
	}
	var accepted contract.PolicyAccepted
	if err := handle.Get(ctx, &accepted); err != nil {
		return "", 0, fmt.Errorf("%s refused the policy: %w", id, err)
	}
	if _, err := start.Get(ctx); err != nil {
		return "", 0, err
	}
	return PoolUpdated, spec.Policy.ExpireAfter, nil
}

// startPool starts a pool's workflow unless one is running; created is
// false when one was.
func startPool(ctx context.Context, c client.Client, spec contract.PoolSpec, taskQueue string) (created bool, err error) {
	_, err = c.ExecuteWorkflow(ctx, PoolStartOptions(spec, taskQueue, enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL),
		contract.PoolWorkflow, contract.PoolStart{Spec: spec})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("start %s: %w", spec.Key.WorkflowID(), err)
	}
	return true, nil
}

// PoolStartOptions are the options a pool is started with: its key as
// search attributes and the starting state, and nothing a tenant's start
// may not set (auth/frontend refuses any other option from a tenant).
func PoolStartOptions(spec contract.PoolSpec, taskQueue string, conflict enumspb.WorkflowIdConflictPolicy) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       spec.Key.WorkflowID(),
		TaskQueue:                orDefault(taskQueue),
		WorkflowIDConflictPolicy: conflict,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes:    poolSearchAttributes(spec.Key),
		StaticSummary:            fmt.Sprintf("%s/%s/%s on %s (%s)", spec.Key.Org, spec.Key.Project, spec.Key.Service, spec.Key.Cluster, spec.Key.Provider),
	}
}

func poolSearchAttributes(k types.PoolKey) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		temporal.NewSearchAttributeKeyKeyword(contract.SAOrg).ValueSet(k.Org),
		temporal.NewSearchAttributeKeyKeyword(contract.SAProject).ValueSet(k.Project),
		temporal.NewSearchAttributeKeyKeyword(contract.SAService).ValueSet(k.Service),
		temporal.NewSearchAttributeKeyKeyword(contract.SAProvider).ValueSet(k.Provider),
		temporal.NewSearchAttributeKeyKeyword(contract.SACluster).ValueSet(k.Cluster),
		temporal.NewSearchAttributeKeyKeyword(contract.SAState).ValueSet(contract.StateStarting),
	)
}

func orDefault(q string) string {
	if q == "" {
		return contract.DefaultTaskQueue
	}
	return q
}

// PoolStatus runs the `status` query, retrying transient failures.
func PoolStatus(ctx context.Context, c client.Client, key types.PoolKey) (contract.PoolStatus, error) {
	var st contract.PoolStatus
	err := query(ctx, c, key.WorkflowID(), contract.QueryStatus, &st)
	return st, err
}

// ScalePool runs the validated `scale` update; a rejection comes back as an
// error carrying the validator's reason.
func ScalePool(ctx context.Context, c client.Client, key types.PoolKey, req contract.ScaleRequest) (contract.ScaleAccepted, error) {
	var out contract.ScaleAccepted
	var err error
	if req.Auth, err = authorize(c, key.WorkflowID(), contract.UpdateScale, &req, &req.RequestedBy); err != nil {
		return out, err
	}
	return out, update(ctx, c, key, contract.UpdateScale, req, &out)
}

// ForceScalePool sends the `force-scale` signal (clamped, fire-and-forget).
func ForceScalePool(ctx context.Context, c client.Client, key types.PoolKey, req contract.ScaleRequest) error {
	var err error
	if req.Auth, err = authorize(c, key.WorkflowID(), contract.SignalForceScale, &req, &req.RequestedBy); err != nil {
		return err
	}
	if err := c.SignalWorkflow(ctx, key.WorkflowID(), "", contract.SignalForceScale, req); err != nil {
		return fmt.Errorf("%s %s: %w", contract.SignalForceScale, key.WorkflowID(), err)
	}
	return nil
}

// PausePool, ResumePool and DeregisterPool run their updates.
func PausePool(ctx context.Context, c client.Client, key types.PoolKey, req contract.PauseRequest) (contract.PoolStatus, error) {
	return pauseUpdate(ctx, c, key, contract.UpdatePause, req)
}

func ResumePool(ctx context.Context, c client.Client, key types.PoolKey, req contract.PauseRequest) (contract.PoolStatus, error) {
	return pauseUpdate(ctx, c, key, contract.UpdateResume, req)
}

func pauseUpdate(ctx context.Context, c client.Client, key types.PoolKey, name string, req contract.PauseRequest) (contract.PoolStatus, error) {
	var out contract.PoolStatus
	var err error
	if req.Auth, err = authorize(c, key.WorkflowID(), name, &req, &req.RequestedBy); err != nil {
		return out, err
	}
	return out, update(ctx, c, key, name, req, &out)
}

func DeregisterPool(ctx context.Context, c client.Client, key types.PoolKey, req contract.DeregisterRequest) (contract.PoolStatus, error) {
	var out contract.PoolStatus
	var err error
	if req.Auth, err = authorize(c, key.WorkflowID(), contract.UpdateDeregister, &req, &req.RequestedBy); err != nil {
		return out, err
	}
	return out, update(ctx, c, key, contract.UpdateDeregister, req, &out)
}

// SetPoolPolicy runs the validated `set-policy` update.
func SetPoolPolicy(ctx context.Context, c client.Client, key types.PoolKey, p types.Policy) (contract.PolicyAccepted, error) {
	var out contract.PolicyAccepted
	req := contract.SetPolicyRequest{Policy: p}
	var err error
	if req.Auth, err = authorize(c, key.WorkflowID(), contract.UpdateSetPolicy, req, nil); err != nil {
		return out, err
	}
	return out, update(ctx, c, key, contract.UpdateSetPolicy, req, &out)
}

func update(ctx context.Context, c client.Client, key types.PoolKey, name string, arg, out any) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: key.WorkflowID(), UpdateName: name, Args: []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, key.WorkflowID(), err)
	}
	if err := h.Get(ctx, out); err != nil {
		return fmt.Errorf("%s %s: %w", name, key.WorkflowID(), err)
	}
	return nil
}

// isRunning reports whether the workflow ID has an open run.
func isRunning(ctx context.Context, c client.Client, id string) (bool, error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("describe %s: %w", id, err)
	}
	return d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}
