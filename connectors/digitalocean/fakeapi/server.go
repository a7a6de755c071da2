// Package fakeapi is a loopback stand-in for the part of the DigitalOcean
// API v2 the DOKS connector uses: the node pools and nodes of Kubernetes
// clusters under /v2/kubernetes/clusters/{id}/node_pools. It follows the
// API reference: bearer-token auth, {"node_pool(s)": ...} envelopes, name
// and count required on update, DELETE of a node without replace=1 lowers
// the pool's count, {"id","message","request_id"} errors, RateLimit-*
// headers on every answer. Faults (fakehttp) can be injected, including
// ones that apply the request before answering an error.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/digitalocean/godo"

	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server

	// UniquePoolNames refuses a second pool with a name already in use (422).
	UniquePoolNames bool
	// UnavailableSizes are refused on create with a 422 "not available in
	// this region".
	UnavailableSizes []string

	// Faults injects failures in front of the API and logs requests.
	fakehttp.Faults

	token    string
	mu       sync.Mutex
	clusters map[string][]*godo.KubernetesNodePool
	serial   int
}

// New starts a fake that accepts token and holds the given (empty) clusters.
func New(token string, clusterIDs ...string) *Server {
	s := &Server{token: token, clusters: map[string][]*godo.KubernetesNodePool{}}
	for _, id := range clusterIDs {
		s.clusters[id] = nil
	}
	s.Server = httptest.NewServer(s.Wrap(http.HandlerFunc(s.serve)))
	return s
}

// Fail injects fault with the API's error envelope carrying message.
func (s *Server) Fail(fault fakehttp.Fault, message string) {
	fault.Body = errorBody(fault.Status, http.StatusText(fault.Status), message)
	s.Inject(fault)
}

// Pools returns deep copies of a cluster's pools in creation order.
func (s *Server) Pools(clusterID string) []godo.KubernetesNodePool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []godo.KubernetesNodePool
	for _, np := range s.clusters[clusterID] {
		out = append(out, copyPool(np))
	}
	return out
}

// AddPool seeds a pool as if created outside the test; it gets an ID and
// count nodes in state running.
func (s *Server) AddPool(clusterID string, req godo.KubernetesNodePoolCreateRequest) godo.KubernetesNodePool {
	s.mu.Lock()
	defer s.mu.Unlock()
	np := s.newPool(clusterID, &req)
	for _, n := range np.Nodes {
		n.Status.State = "running"
	}
	s.clusters[clusterID] = append(s.clusters[clusterID], np)
	return copyPool(np)
}

// SetNodeState sets one node's status, e.g. "deleting".
func (s *Server) SetNodeState(clusterID, poolID, nodeName, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, np := range s.clusters[clusterID] {
		if np.ID != poolID {
			continue
		}
		for _, n := range np.Nodes {
			if n.Name == nodeName {
				n.Status.State = state
			}
		}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	setRateHeaders(w.Header())
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		writeError(w, http.StatusUnauthorized, "unauthorized", "Unable to authenticate you")
		return
	}
	s.route(w, r)
}

// setRateHeaders mirrors the documented RateLimit-* headers.
func setRateHeaders(h http.Header) {
	h.Set("RateLimit-Limit", "5000")
	h.Set("RateLimit-Remaining", "4999")
	h.Set("RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
}

func writeError(w http.ResponseWriter, status int, id, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(status, id, message))
}

// errorBody is the documented error envelope.
func errorBody(status int, id, message string) []byte {
	b, _ := json.Marshal(map[string]string{"id": id, "message": message, "request_id": fmt.Sprintf("req-%d", status)})
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
