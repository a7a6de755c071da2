// Package simremote serves simulated clusters to other processes: a sim
// host runs each cluster's cloud and Kubernetes API once, and every
// worker that names the cluster with `sim: {endpoint: …}` in its clusters
// file reaches the same cloud and cluster over HTTP on loopback. Several
// workers (and a worker killed and restarted) then act on one fleet, as
// they would on a real cloud; with in-process sims each worker had its own.
//
// The wire is one JSON POST per connector call, /v1/<cluster>/<op>; a
// drain streams its progress as JSON lines so the activity keeps
// heartbeating. Errors keep their errclass class, provider and operation,
// so retry policies behave as they do in-process.
package simremote

import (
	"errors"
	"time"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
	"github.com/hanzoai/visor-fleet/types"
)

// Operations on the wire besides connectors' provider operation names.
const (
	opName      = "Name"
	opCatalog   = "Catalog"
	opObserve   = "ObserveCluster"
	opDrain     = "Drain"
	opUncordon  = "Uncordon"
	pathPrefix  = "/v1/"
	contentJSON = "application/json"
)

// maxRequestBytes bounds what the host reads of one call.
const maxRequestBytes = 4 << 20

// call is every operation's arguments; each uses the fields it needs.
type call struct {
	Pool          types.PoolKey             `json:"pool,omitzero"`
	GroupID       string                    `json:"groupID,omitempty"`
	Target        int                       `json:"target,omitempty"`
	Spec          connectors.NodeGroupSpec  `json:"spec,omitzero"`
	Nodes         []string                  `json:"nodes,omitempty"`
	IDs           []string                  `json:"ids,omitempty"`
	Key           connectors.IdempotencyKey `json:"key,omitempty"`
	Node          string                    `json:"node,omitempty"`
	Deadline      time.Time                 `json:"deadline,omitzero"`
	EvictionRetry time.Duration             `json:"evictionRetry,omitempty"`
}

// reply is every operation's answer: one result field, or Err.
type reply struct {
	Name        string                         `json:"name,omitempty"`
	Groups      []connectors.NodeGroup         `json:"groups,omitempty"`
	Group       *connectors.NodeGroup          `json:"group,omitempty"`
	Catalog     []types.InstanceType           `json:"catalog,omitempty"`
	Instances   []connectors.Instance          `json:"instances,omitempty"`
	Observation *connectors.ClusterObservation `json:"observation,omitempty"`
	Progress    *connectors.DrainProgress      `json:"progress,omitempty"`
	Drained     *connectors.DrainResult        `json:"drained,omitempty"`
	Err         *wireError                     `json:"err,omitempty"`
}

// wireError is an error as it crossed: its class when it had one.
type wireError struct {
	Message    string         `json:"message"`
	Classified bool           `json:"classified,omitempty"`
	Class      errclass.Class `json:"class,omitempty"`
	Provider   string         `json:"provider,omitempty"`
	Op         string         `json:"op,omitempty"`
	RetryAfter time.Duration  `json:"retryAfter,omitempty"`
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error()}
	var e *errclass.Error
	if errors.As(err, &e) {
		w.Classified, w.Class, w.Provider, w.Op, w.RetryAfter = true, e.Class, e.Provider, e.Op, e.RetryAfter
		if e.Err != nil {
			w.Message = e.Err.Error()
		}
	}
	return w
}

func (w *wireError) err() error {
	if w == nil {
		return nil
	}
	if !w.Classified {
		return errors.New(w.Message)
	}
	return &errclass.Error{Class: w.Class, Provider: w.Provider, Op: w.Op, RetryAfter: w.RetryAfter, Err: errors.New(w.Message)}
}
