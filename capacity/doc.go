// Package capacity evaluates a pool's capacity policies (scheduled
// capacity windows, headroom, cost budgets, disruption budgets, org
// ceilings) as pure functions of (policy, now) and observed state, for
// the control law (workflows.Decide) to call. Nothing here reads the
// clock or does I/O, so a workflow may call it and replay stays
// deterministic; docs/capacity-policies.md describes each policy.
package capacity
