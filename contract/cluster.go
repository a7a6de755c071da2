package contract

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// More cluster workflow messages.
const (
	// SignalWatcherReport carries the watcher's view of reachability.
	SignalWatcherReport = "watcher-report" // WatcherReport
	// SignalPoolRegistered / SignalPoolDeregistered are sent by pools.
	SignalPoolRegistered   = "pool-registered"   // PoolRegistration
	SignalPoolDeregistered = "pool-deregistered" // PoolRegistration
)

// ClusterDeclared is what the operator asked for. It is never merged with
// ClusterObserved: "declared active, observed unreachable" are both true.
type ClusterDeclared struct {
	ID           string       `json:"id"`
	Phase        ClusterPhase `json:"phase"`
	Region       string       `json:"region,omitempty"`
	Zone         string       `json:"zone,omitempty"`
	Residency    string       `json:"residency,omitempty"`
	MetricsLabel string       `json:"metricsLabel,omitempty"`
	Provider     string       `json:"provider"`
	Owner        string       `json:"owner,omitempty"`
	// Tier is how the cluster's nodes are billed: managed (the platform's
	// estate, the default) or byo (the tenant's own account). Its pools
	// take it from the gate; only `set-tier` by an administrator moves it.
	Tier BillingTier `json:"tier,omitempty"`
	// SampleInterval is how often the watcher samples this cluster.
	SampleInterval types.Duration `json:"sampleInterval,omitempty"`
	// StaleAfter: with no successful sample for this long the cluster is
	// treated as unreachable and its pools freeze scale-down.
	StaleAfter types.Duration `json:"staleAfter,omitempty"`
}

// Validate names the first bad field of each kind.
func (d ClusterDeclared) Validate() error {
	var errs []error
	if err := types.ValidateDNSLabel("cluster id", d.ID); err != nil {
		errs = append(errs, err)
	}
	if err := types.ValidateDNSLabel("provider", d.Provider); err != nil {
		errs = append(errs, err)
	}
	if !d.Phase.Valid() {
		errs = append(errs, fmt.Errorf("phase %q is not one of pending, active, draining, disabled", d.Phase))
	}
	if err := ValidateTier("tier", d.Tier); err != nil {
		errs = append(errs, err)
	}
	if d.SampleInterval.D() < 0 || (d.SampleInterval > 0 && d.SampleInterval.D() < time.Second) {
		errs = append(errs, fmt.Errorf("sampleInterval %s must be at least 1s", d.SampleInterval))
	}
	if d.StaleAfter.D() < 0 {
		errs = append(errs, fmt.Errorf("staleAfter %s must not be negative", d.StaleAfter))
	}
	return errors.Join(errs...)
}

// Valid reports whether the phase is one of the four.
func (p ClusterPhase) Valid() bool {
	switch p {
	case PhasePending, PhaseActive, PhaseDraining, PhaseDisabled:
		return true
	}
	return false
}

// Capabilities the agent reports.
type Capabilities struct {
	MIG    bool `json:"mig"`
	NVLink bool `json:"nvlink"`
	RDMA   bool `json:"rdma"`
}

// Has reports whether the named capability (mig, nvlink, rdma) is present.
func (c Capabilities) Has(name string) bool {
	switch name {
	case "mig":
		return c.MIG
	case "nvlink":
		return c.NVLink
	case "rdma":
		return c.RDMA
	}
	return false
}

// SyncState of the cluster's agent connection.
type SyncState string

const (
	SyncConnected    SyncState = "connected"
	SyncDisconnected SyncState = "disconnected"
	SyncSyncing      SyncState = "syncing"
)

// ClusterObserved is what is true right now, as reported by two sources
// kept apart in the workflow: the watcher inside our worker (reachability,
// last successful sample) and the cluster's agent, authenticated by its
// enrollment token (sync state, capabilities, version, counts).
type ClusterObserved struct {
	// Reachable is what the pools' gate uses: the watcher reaches the
	// cluster, its last sample is fresh, and no fresh agent report says the
	// cluster is not in sync.
	Reachable bool      `json:"reachable"`
	SyncState SyncState `json:"syncState"`
	// LastSyncAt is the watcher's last successful sample.
	LastSyncAt time.Time `json:"lastSyncAt,omitempty"`
	// LagMillis is how far the agent's clock was behind the workflow's when
	// its last report arrived (negative: ahead).
	LagMillis    int64        `json:"lagMs"`
	Capabilities Capabilities `json:"capabilities"`
	AgentVersion string       `json:"agentVersion,omitempty"`
	Nodes        int          `json:"nodes"`
	// Pools is the node pools the agent counts in the cluster; the pools
	// registered with Visor are ClusterStatus.Pools.
	Pools int `json:"pools"`
	// LastReportAt is when the agent's last accepted report arrived.
	LastReportAt time.Time `json:"lastReportAt,omitempty"`
	LastError    string    `json:"lastError,omitempty"`
}

// Valid reports whether the sync state is one of the three.
func (s SyncState) Valid() bool {
	switch s {
	case SyncConnected, SyncDisconnected, SyncSyncing:
		return true
	}
	return false
}

// WatcherReport is the watcher's signal to its cluster workflow.
type WatcherReport struct {
	Reachable bool      `json:"reachable"`
	LastSync  time.Time `json:"lastSync"`
	LastError string    `json:"lastError,omitempty"`
	At        time.Time `json:"at"`
	// Auth is the watcher's system signature over the rest (package auth).
	Auth *SystemSignature `json:"auth,omitempty"`
}

// PoolThresholds is what the watcher needs to know of a pool to tell idle
// from busy the way the pool does.
type PoolThresholds struct {
	IdleCPU    float64 `json:"idleCPU"`
	IdleMemory float64 `json:"idleMemory"`
}

// PoolRegistration is a pool announcing itself to its cluster.
type PoolRegistration struct {
	PoolID     string         `json:"poolID"`
	Thresholds PoolThresholds `json:"thresholds"`
}

// ClusterStatus is the cluster workflow's `status` query answer.
type ClusterStatus struct {
	Declared ClusterDeclared           `json:"declared"`
	Observed ClusterObserved           `json:"observed"`
	Pools    map[string]PoolThresholds `json:"pools"`
	// Frozen says why the cluster's pools may not scale down, if so.
	Frozen       string `json:"frozen,omitempty"`
	LastRejected string `json:"lastRejected,omitempty"`
	// TokenFingerprint names the current enrollment token (never the token).
	TokenFingerprint string    `json:"tokenFingerprint,omitempty"`
	TokenIssuedAt    time.Time `json:"tokenIssuedAt,omitempty"`
	// LastPhaseChange says who moved the cluster to its phase, and why.
	LastPhaseChange *PhaseChange `json:"lastPhaseChange,omitempty"`
	// LastTierChange says who moved the cluster to its billing tier, and why.
	LastTierChange *TierChange `json:"lastTierChange,omitempty"`
}

// PhaseChange records an accepted `set-phase`.
type PhaseChange struct {
	From        ClusterPhase `json:"from"`
	To          ClusterPhase `json:"to"`
	Reason      string       `json:"reason"`
	RequestedBy string       `json:"requestedBy,omitempty"`
	At          time.Time    `json:"at"`
}

// SetPhaseRequest changes a cluster's declared phase.
type SetPhaseRequest struct {
	Phase       ClusterPhase   `json:"phase"`
	Reason      string         `json:"reason"`
	RequestedBy string         `json:"requestedBy,omitempty"`
	Auth        *Authorization `json:"auth,omitempty"`
}

// ObservedReport is the agent's view of its cluster, sent with the
// `report-observed` update and signed with the key derived from the
// cluster's enrollment token (SignObservedReport).
type ObservedReport struct {
	ClusterID string `json:"clusterID"`
	// ReportedAt is the agent's clock; reports more than MaxReportSkew away
	// from the workflow's clock, or not newer than the last accepted one,
	// are refused.
	ReportedAt   time.Time    `json:"reportedAt"`
	SyncState    SyncState    `json:"syncState"`
	Capabilities Capabilities `json:"capabilities"`
	AgentVersion string       `json:"agentVersion,omitempty"`
	Nodes        int          `json:"nodes"`
	Pools        int          `json:"pools"`
	// Signature is Ed25519 over every other field, base64url.
	Signature string `json:"signature"`
}

// Validate checks the report's content (not its signature).
func (r ObservedReport) Validate() error {
	var errs []error
	if err := types.ValidateDNSLabel("clusterID", r.ClusterID); err != nil {
		errs = append(errs, err)
	}
	if r.ReportedAt.IsZero() {
		errs = append(errs, errors.New("reportedAt is missing"))
	}
	if !r.SyncState.Valid() {
		errs = append(errs, fmt.Errorf("syncState %q is not one of connected, disconnected, syncing", r.SyncState))
	}
	if len(r.AgentVersion) > 64 || strings.IndexFunc(r.AgentVersion, func(c rune) bool { return c < 0x20 || c == 0x7f }) >= 0 {
		errs = append(errs, fmt.Errorf("agentVersion %q must be at most 64 printable characters", r.AgentVersion))
	}
	if r.Nodes < 0 {
		errs = append(errs, fmt.Errorf("nodes %d is negative", r.Nodes))
	}
	if r.Pools < 0 {
		errs = append(errs, fmt.Errorf("pools %d is negative", r.Pools))
	}
	return errors.Join(errs...)
}

// RotateTokenRequest replaces the cluster's token. It carries only what
// verifies the new token (TokenCredentials), never the token: the caller
// mints it and keeps it.
type RotateTokenRequest struct {
	TokenHash   string         `json:"tokenHash"`
	ReportKey   string         `json:"reportKey"`
	Reason      string         `json:"reason"`
	RequestedBy string         `json:"requestedBy,omitempty"`
	Auth        *Authorization `json:"auth,omitempty"`
}

// TokenIssued is the `rotate-token` update's answer; the token itself is
// only ever in the caller's hands.
type TokenIssued struct {
	Cluster     string    `json:"cluster"`
	Fingerprint string    `json:"fingerprint"`
	IssuedAt    time.Time `json:"issuedAt"`
}
