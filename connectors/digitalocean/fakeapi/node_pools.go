package fakeapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/digitalocean/godo"
)

const poolsPath = "/v2/kubernetes/clusters/{cluster}/node_pools"

// route serves the node pool endpoints; s.mu is held.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+poolsPath, s.listPools)
	mux.HandleFunc("POST "+poolsPath, s.createPool)
	mux.HandleFunc("GET "+poolsPath+"/{pool}", s.getPool)
	mux.HandleFunc("PUT "+poolsPath+"/{pool}", s.updatePool)
	mux.HandleFunc("DELETE "+poolsPath+"/{pool}", s.deletePool)
	mux.HandleFunc("DELETE "+poolsPath+"/{pool}/nodes/{node}", s.deleteNode)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "The resource you were accessing could not be found.")
	})
	mux.ServeHTTP(w, r)
}

func (s *Server) cluster(w http.ResponseWriter, r *http.Request) ([]*godo.KubernetesNodePool, bool) {
	pools, ok := s.clusters[r.PathValue("cluster")]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "The resource you were accessing could not be found.")
	}
	return pools, ok
}

func (s *Server) pool(w http.ResponseWriter, r *http.Request) (*godo.KubernetesNodePool, bool) {
	pools, ok := s.cluster(w, r)
	if !ok {
		return nil, false
	}
	for _, np := range pools {
		if np.ID == r.PathValue("pool") {
			return np, true
		}
	}
	writeError(w, http.StatusNotFound, "not_found", "The resource you were accessing could not be found.")
	return nil, false
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "invalid JSON: "+err.Error())
		return false
	}
	return true
}

func (s *Server) listPools(w http.ResponseWriter, r *http.Request) {
	pools, ok := s.cluster(w, r)
	if !ok {
		return
	}
	out := make([]godo.KubernetesNodePool, 0, len(pools))
	for _, np := range pools {
		out = append(out, copyPool(np))
	}
	writeJSON(w, http.StatusOK, map[string]any{"node_pools": out})
}

func (s *Server) getPool(w http.ResponseWriter, r *http.Request) {
	if np, ok := s.pool(w, r); ok {
		writeJSON(w, http.StatusOK, map[string]any{"node_pool": copyPool(np)})
	}
}

func (s *Server) createPool(w http.ResponseWriter, r *http.Request) {
	pools, ok := s.cluster(w, r)
	var req godo.KubernetesNodePoolCreateRequest
	if !ok || !decode(w, r, &req) {
		return
	}
	switch {
	case req.Name == "" || req.Size == "" || (req.Count < 1 && !req.AutoScale):
		writeError(w, http.StatusUnprocessableEntity, "unprocessable_entity", "validation error: name, size and count are required")
		return
	case slices.Contains(s.UnavailableSizes, req.Size):
		writeError(w, http.StatusUnprocessableEntity, "unprocessable_entity", fmt.Sprintf("size %s is not available in this region", req.Size))
		return
	case s.UniquePoolNames && slices.ContainsFunc(pools, func(np *godo.KubernetesNodePool) bool { return np.Name == req.Name }):
		writeError(w, http.StatusUnprocessableEntity, "unprocessable_entity", "a node pool named "+req.Name+" already exists")
		return
	}
	np := s.newPool(r.PathValue("cluster"), &req)
	s.clusters[r.PathValue("cluster")] = append(pools, np)
	writeJSON(w, http.StatusCreated, map[string]any{"node_pool": copyPool(np)})
}

func (s *Server) updatePool(w http.ResponseWriter, r *http.Request) {
	np, ok := s.pool(w, r)
	var req godo.KubernetesNodePoolUpdateRequest
	if !ok || !decode(w, r, &req) {
		return
	}
	if req.Name == "" || req.Count == nil || *req.Count < 0 {
		writeError(w, http.StatusUnprocessableEntity, "unprocessable_entity", "validation error: name and count are required")
		return
	}
	np.Name = req.Name
	// Fields present in the body replace the pool's; absent ones are kept.
	if req.Tags != nil {
		np.Tags = append(systemTags(r.PathValue("cluster")), req.Tags...)
	}
	if req.Labels != nil {
		np.Labels = maps.Clone(req.Labels)
	}
	if req.Taints != nil {
		np.Taints = slices.Clone(*req.Taints)
	}
	if req.AutoScale != nil {
		np.AutoScale = *req.AutoScale
	}
	np.Count = *req.Count
	for len(np.Nodes) < np.Count {
		np.Nodes = append(np.Nodes, s.newNode(np.Name))
	}
	np.Nodes = np.Nodes[:np.Count] // shrinking drops the newest
	writeJSON(w, http.StatusAccepted, map[string]any{"node_pool": copyPool(np)})
}

func (s *Server) deletePool(w http.ResponseWriter, r *http.Request) {
	np, ok := s.pool(w, r)
	if !ok {
		return
	}
	id := r.PathValue("cluster")
	s.clusters[id] = slices.DeleteFunc(s.clusters[id], func(p *godo.KubernetesNodePool) bool { return p == np })
	w.WriteHeader(http.StatusNoContent)
}

// deleteNode removes the node; without replace=1 the pool's count drops
// by one, with it a fresh node takes its place.
func (s *Server) deleteNode(w http.ResponseWriter, r *http.Request) {
	np, ok := s.pool(w, r)
	if !ok {
		return
	}
	i := slices.IndexFunc(np.Nodes, func(n *godo.KubernetesNode) bool { return n.ID == r.PathValue("node") })
	if i < 0 {
		writeError(w, http.StatusNotFound, "not_found", "The resource you were accessing could not be found.")
		return
	}
	np.Nodes = slices.Delete(np.Nodes, i, i+1)
	if r.URL.Query().Get("replace") == "1" {
		np.Nodes = append(np.Nodes, s.newNode(np.Name))
	} else {
		np.Count--
	}
	w.WriteHeader(http.StatusAccepted)
}

// newPool builds a pool the way the API reports one: DigitalOcean's own
// tags added, IDs shaped like UUIDs that sort in creation order, nodes
// provisioning.
func (s *Server) newPool(cluster string, req *godo.KubernetesNodePoolCreateRequest) *godo.KubernetesNodePool {
	np := &godo.KubernetesNodePool{
		ID: s.nextID(), Name: req.Name, Size: req.Size, Count: req.Count,
		Tags:   append(systemTags(cluster), req.Tags...),
		Labels: maps.Clone(req.Labels), Taints: slices.Clone(req.Taints),
		AutoScale: req.AutoScale, MinNodes: req.MinNodes, MaxNodes: req.MaxNodes,
	}
	for range req.Count {
		np.Nodes = append(np.Nodes, s.newNode(req.Name))
	}
	return np
}

func (s *Server) newNode(poolName string) *godo.KubernetesNode {
	s.serial++
	return &godo.KubernetesNode{
		ID:        s.nextID(),
		Name:      fmt.Sprintf("%s-%05d", poolName, s.serial),
		Status:    &godo.KubernetesNodeStatus{State: "provisioning"},
		DropletID: fmt.Sprint(100000 + s.serial),
		CreatedAt: time.Now().UTC(),
	}
}

func (s *Server) nextID() string {
	s.serial++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", s.serial, s.serial)
}

func systemTags(cluster string) []string {
	return []string{"k8s", "k8s:" + cluster, "k8s:worker"}
}

func copyPool(np *godo.KubernetesNodePool) godo.KubernetesNodePool {
	c := *np
	c.Tags = slices.Clone(np.Tags)
	c.Labels = maps.Clone(np.Labels)
	c.Taints = slices.Clone(np.Taints)
	c.Nodes = nil
	for _, n := range np.Nodes {
		nc := *n
		if n.Status != nil {
			st := *n.Status
			nc.Status = &st
		}
		c.Nodes = append(c.Nodes, &nc)
	}
	return c
}
