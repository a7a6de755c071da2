package activities

import (
	"time"

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
