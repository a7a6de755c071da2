// Package law is the control law: Decide, a pure, deterministic function
// of (policy, rules, durable state, observation, now), and the capacity
// policies it applies (scheduled capacity windows, headroom, cost
// budgets, disruption budgets, org ceilings; capacity_*.go). Nothing here
// reads the clock, does I/O or imports Temporal, so the pool workflow may
// call it and replay stays deterministic, and the scorer (score) runs the
// very same law offline. Read decision.go against docs/design.md's table;
// docs/capacity-policies.md describes each capacity policy.
package law
