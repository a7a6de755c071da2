// Package sizing turns pending pods into a node purchase: provider catalogs
// as data, and a cost-aware first-fit-decreasing bin packer that chooses
// one instance type and a node count per decision.
//
// It is pure (no Temporal, no I/O): the pool workflow's sizing activity
// calls PlanScaleUp with the observation and the pool's allowed catalog,
// and records the Plan in history. Baseline keeps the HIP's original rule
// so tests and benchmarks can compare against it.
package sizing
