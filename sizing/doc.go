// Package sizing turns pending pods into a node purchase: provider catalogs
// as data, and a cost-aware first-fit-decreasing bin packer that chooses
// one instance type and a node count per decision.
//
// It is pure (no Temporal, no I/O): the pool workflow's sizing activity
// calls PlanScaleUp with the observation and the pool's catalog (Restrict
// to the allowed sizes, OverridePrices for the user's prices), and records
// the Plan. When the provider then reports InsufficientCapacity for the
// chosen size, PlanScaleUpExcluding plans again without it. Baseline keeps
// the HIP's original sum-and-divide rule so tests and benchmarks can
// compare against it. Prices are US dollars per node-hour.
//
// Speed: pods with identical requests are packed as one shape (a
// Deployment's replicas cost one step), new nodes are kept as runs of
// identical nodes, and first fit finds its node through a segment tree, so
// a plan costs a sort of the pod keys plus a little per shape and size.
package sizing
