package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/types"
)

// signSystem signs a trusted input with the worker's system key, or returns
// nil when this worker has none (the workflow then treats it as unsigned).
func (a *Activities) signSystem(workflowID, message string, v any) (*types.SystemSignature, error) {
	if a.SystemKey == nil {
		return nil, nil
	}
	s, err := auth.SignSystemValue(*a.SystemKey, workflowID, message, v, time.Now())
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// Trust returns the public keys this worker verifies callers and trusted
// inputs with. Workflows read it through this activity so the keys they
// verified with are in history and replay sees the same ones.
func (a *Activities) Trust(context.Context) (auth.Trust, error) {
	if a.TrustKeys == nil {
		return auth.Trust{}, temporal.NewNonRetryableApplicationError("this worker has no trust configured (visor worker --trust)", "NoTrust", nil)
	}
	return *a.TrustKeys, nil
}

// SignInput asks the worker to vouch for a message a workflow sends another.
type SignInput struct {
	Target  string `json:"target"`
	Message string `json:"message"`
	// Body is the message's payload as it will be sent (JSON).
	Body []byte `json:"body"`
}

// SignAsWorkflow signs in.Body for in.Target with the system key, bound to
// the calling workflow's ID (auth.FromWorkflow): a workflow cannot have the
// worker vouch for a message in another workflow's name. Workflow code
// holds no key, so a workflow would call this (as a local activity) and
// send the result along. No workflow runs it: the one workflow-to-workflow
// message, cluster-gate, is not believed (a pool reads its gate with
// ReadClusterGate). The signature is not a secret.
func (a *Activities) SignAsWorkflow(ctx context.Context, in SignInput) (types.SystemSignature, error) {
	if a.SystemKey == nil {
		return types.SystemSignature{}, temporal.NewNonRetryableApplicationError("this worker has no system key (visor worker --system-key)", "NoSystemKey", nil)
	}
	sender := activity.GetInfo(ctx).WorkflowExecution.ID
	s, err := auth.SignSystem(*a.SystemKey, in.Target, auth.FromWorkflow(in.Message, sender), in.Body, time.Now())
	if err != nil {
		return s, temporal.NewNonRetryableApplicationError(err.Error(), "BadSignInput", nil)
	}
	return s, nil
}
