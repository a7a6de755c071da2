package contract

import (
	"errors"
	"fmt"
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

// ClusterObserved is what is true right now, as reported.
type ClusterObserved struct {
	Reachable    bool         `json:"reachable"`
	SyncState    SyncState    `json:"syncState"`
	LastSyncAt   time.Time    `json:"lastSyncAt,omitempty"`
	LagMillis    int64        `json:"lagMs"`
	Capabilities Capabilities `json:"capabilities"`
	AgentVersion string       `json:"agentVersion,omitempty"`
	Nodes        int          `json:"nodes"`
	Pools        int          `json:"pools"`
	LastError    string       `json:"lastError,omitempty"`
}

// WatcherReport is the watcher's signal to its cluster workflow.
type WatcherReport struct {
	Reachable bool      `json:"reachable"`
	LastSync  time.Time `json:"lastSync"`
	LastError string    `json:"lastError,omitempty"`
	At        time.Time `json:"at"`
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
}

// SetPhaseRequest changes a cluster's declared phase.
type SetPhaseRequest struct {
	Phase       ClusterPhase `json:"phase"`
	Reason      string       `json:"reason"`
	RequestedBy string       `json:"requestedBy,omitempty"`
}
