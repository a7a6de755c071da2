package contract

// PoolStart is the first input of a pool workflow. It encodes exactly as
// the worker's own input with no carried state (workflows.PoolInput{Spec}),
// so a client starts pools without linking the worker.
type PoolStart struct {
	Spec PoolSpec `json:"spec"`
}

// ClusterStart is the first input of a cluster workflow, encoding exactly
// as workflows.ClusterInput with no carried state. TokenHash (SHA-256, hex)
// and ReportKey (Ed25519 public key) verify the enrollment token; the token
// itself never enters history (TokenCredentials).
type ClusterStart struct {
	Declared  ClusterDeclared `json:"declared"`
	TokenHash string          `json:"tokenHash,omitempty"`
	ReportKey string          `json:"reportKey,omitempty"`
}

// MemoClusterDeclared is the cluster memo key holding the declared half,
// so listings (and the metrics-label check) read it without a worker.
const MemoClusterDeclared = "declared"
