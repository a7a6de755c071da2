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
// Scheduling: every size has node templates (Templates: labels, taints,
// allocatable, one per zone), and each pending pod is matched against them
// and against the free room of existing and booting nodes with the
// kube-scheduler's filters, through k8s.io/component-helpers: nodeSelector
// and required node affinity (nodeaffinity), taints and tolerations
// (FindMatchingUntoleratedTaint). Host ports, required anti-affinity on
// hostname and DoNotSchedule spread on hostname and zone become per-node
// caps and isolation in the packer (podrules.go). A pod no template can
// hold is CodeNoFit with the failing constraint in its reason.
//
// GPU models: templates label nvidia.com/gpu.product as NVIDIA's GPU
// Feature Discovery does (GPUProduct: A10G is NVIDIA-A10G); a pod's
// GPUModel matches in the catalog's short form or the GFD form, but a
// selector on the label compares values exactly, as the scheduler does.
// Ephemeral storage is a resource like CPU: a size allocates its root
// disk less the kubelet's 10% eviction reserve, and a node that reports
// none holds no pod that asks for some.
//
// Zone spread and running pods: what is modelled exactly is this. The
// observer counts, per DoNotSchedule zone spread constraint of a pending
// pod, the bound pods of its namespace that the selector matches, per
// zone, on the nodes it lists (the pools' nodes; pods on other nodes are
// not counted, nor is nodeAffinityPolicy or matchLabelKeys applied). A
// zone whose count plus the pod exceeds the emptiest admitted zone's by
// more than maxSkew takes none of the shape's pods: neither existing
// nodes' room there nor zone templates there (spread_zones.go). Only the
// first pod is judged, so a large shape may be bought more room in the
// allowed zones than the scheduler would need. A size without zones
// (the provider picks one) is not judged.
//
// Speed: pods with identical requests and constraints are packed as one
// shape (a Deployment's replicas cost one step), new nodes are kept as runs
// of identical nodes, and first fit finds its node through a segment tree, so
// a plan costs a sort of the pod keys plus a little per shape and size.
// Each node filter is evaluated once per template, not per pod; sizes that
// look alike to every pod are packed once; and on large requests a size
// whose lower bound cannot beat the best packing is not packed (bound.go).
package sizing
