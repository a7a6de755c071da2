package simremote

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Handler serves clusters (by ID) to remote workers. Each cluster's
// Provider is served through connectors.Checked, as a worker's own is: a
// call off the wire meets the same argument checks, which the provider
// does not repeat.
func Handler(clusters map[string]connectors.Cluster) http.Handler {
	checked := make(map[string]connectors.Cluster, len(clusters))
	for id, c := range clusters {
		c.Provider = connectors.Checked(c.Provider)
		checked[id] = c
	}
	return &host{clusters: checked}
}

type host struct{ clusters map[string]connectors.Cluster }

func (h *host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "simremote: POST only", http.StatusMethodNotAllowed)
		return
	}
	id, op, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, pathPrefix), "/")
	c, known := h.clusters[id]
	if !ok || !strings.HasPrefix(r.URL.Path, pathPrefix) || !known {
		http.Error(w, fmt.Sprintf("simremote: no cluster %q here (path %s)", id, r.URL.Path), http.StatusNotFound)
		return
	}
	var in call
	if err := json.NewDecoder(io.LimitReader(r.Body, maxRequestBytes)).Decode(&in); err != nil {
		http.Error(w, fmt.Sprintf("simremote: %s %s: bad request body: %v", id, op, err), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", contentJSON)
	if op == opDrain {
		h.drain(w, r, c, in)
		return
	}
	out, err := h.do(r, c, op, in)
	if err == errUnknownOp {
		http.Error(w, fmt.Sprintf("simremote: %s: unknown operation %q", id, op), http.StatusNotFound)
		return
	}
	out.Err = toWire(err)
	_ = json.NewEncoder(w).Encode(out)
}

var errUnknownOp = fmt.Errorf("unknown operation")

func (h *host) do(r *http.Request, c connectors.Cluster, op string, in call) (reply, error) {
	ctx := r.Context()
	var out reply
	var err error
	switch op {
	case opName:
		out.Name = c.Provider.Name()
	case opCatalog:
		out.Catalog, err = c.Provider.Catalog(ctx)
	case connectors.OpNodeGroups:
		out.Groups, err = c.Provider.NodeGroups(ctx, in.Pool)
	case connectors.OpSetTargetSize:
		err = c.Provider.SetTargetSize(ctx, in.GroupID, in.Target, in.Key)
	case connectors.OpCreateNodeGroup:
		var g connectors.NodeGroup
		if g, err = c.Provider.CreateNodeGroup(ctx, in.Spec, in.Key); err == nil {
			out.Group = &g
		}
	case connectors.OpDeleteNodes:
		err = c.Provider.DeleteNodes(ctx, in.GroupID, in.Nodes, in.Key)
	case connectors.OpDeleteNodeGroup:
		err = c.Provider.DeleteNodeGroup(ctx, in.GroupID, in.Key)
	case connectors.OpLeakedInstances, connectors.OpDeleteInstances:
		lf, ok := c.Provider.(connectors.LeakFinder)
		if !ok {
			return out, errUnknownOp
		}
		if op == connectors.OpLeakedInstances {
			out.Instances, err = lf.LeakedInstances(ctx, in.Pool)
		} else {
			err = lf.DeleteInstances(ctx, in.Pool, in.IDs, in.Key)
		}
	case opObserve:
		var obs connectors.ClusterObservation
		if obs, err = c.Observer.ObserveCluster(ctx); err == nil {
			out.Observation = &obs
		}
	case opUncordon:
		err = c.Drainer.Uncordon(ctx, in.Node)
	default:
		return out, errUnknownOp
	}
	return out, err
}

// drain streams one JSON line per progress report, then the result.
func (h *host) drain(w http.ResponseWriter, r *http.Request, c connectors.Cluster, in call) {
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	res, err := c.Drainer.Drain(r.Context(), in.Node, connectors.DrainOptions{
		Deadline: in.Deadline, EvictionRetry: in.EvictionRetry,
		Progress: func(p connectors.DrainProgress) {
			_ = enc.Encode(reply{Progress: &p})
			if flusher != nil {
				flusher.Flush()
			}
		},
	})
	out := reply{Err: toWire(err)}
	if err == nil {
		out.Drained = &res
	}
	_ = enc.Encode(out)
}
