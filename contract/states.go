package contract

// Pool states, the one word a pool publishes as VisorState.
const (
	StateStarting      = "starting" // registered, not yet published
	StateSteady        = "steady"
	StatePending       = "pending"
	StateScalingUp     = "scaling-up"
	StateIdleNodes     = "idle-nodes"
	StateFrozen        = "frozen"
	StateGated         = "gated"
	StatePaused        = "paused"
	StateDeregistering = "deregistering"
)

// PoolStates lists every state, for validating filters.
var PoolStates = []string{
	StateStarting, StateSteady, StatePending, StateScalingUp, StateIdleNodes,
	StateFrozen, StateGated, StatePaused, StateDeregistering,
}
