package activities

import (
	"context"
	"time"

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
