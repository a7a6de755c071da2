// Package fakeapi is a loopback stand-in for the part of the DigitalOcean
// API v2 the DOKS connector uses: the node pools and nodes of Kubernetes
// clusters under /v2/kubernetes/clusters/{id}/node_pools. It follows the
// API reference: bearer-token auth, {"node_pool(s)": ...} envelopes, name
// and count required on update, DELETE of a node without replace=1 lowers
// the pool's count, {"id","message","request_id"} errors, RateLimit-*
// headers on every answer. Faults can be injected, including ones that
// apply the request before answering an error.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/digitalocean/godo"
)

// Fault makes matching requests fail.
type Fault struct {
	Method string // empty matches any method
	Path   string // exact URL path; empty matches any path
	Status int
	// Header is added to the answer, e.g. Retry-After.
	Header http.Header
	// Message is the error body's message.
	Message string
	// AfterApply carries the request out before answering the error: the
	// write happened, the caller cannot tell.
	AfterApply bool
	// Skip lets this many matching requests through before the fault hits.
	Skip int
	// Times is how many requests it hits; zero means once.
	Times int
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server

	// UniquePoolNames refuses a second pool with a name already in use (422).
	UniquePoolNames bool
	// UnavailableSizes are refused on create with a 422 "not available in
	// this region".
	UnavailableSizes []string

	token    string
	mu       sync.Mutex
	clusters map[string][]*godo.KubernetesNodePool
	faults   []*Fault
	requests []string
	serial   int
}

// New starts a fake that accepts token and holds the given (empty) clusters.
func New(token string, clusterIDs ...string) *Server {
	s := &Server{token: token, clusters: map[string][]*godo.KubernetesNodePool{}}
	for _, id := range clusterIDs {
		s.clusters[id] = nil
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Inject queues a fault; faults are matched in the order injected.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times == 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

// Requests lists "METHOD /path?query" of every request received.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
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
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	setRateHeaders(w.Header())
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		writeError(w, http.StatusUnauthorized, "unauthorized", "Unable to authenticate you")
		return
	}
	fault := s.takeFault(r)
	if fault != nil && !fault.AfterApply {
		s.writeFault(w, fault)
		return
	}
	rec := httptest.NewRecorder()
	s.route(rec, r)
	if fault != nil {
		s.writeFault(w, fault)
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (s *Server) takeFault(r *http.Request) *Fault {
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == r.Method) && (f.Path == "" || f.Path == r.URL.Path) {
			if f.Skip > 0 {
				f.Skip--
				continue
			}
			f.Times--
			if f.Times == 0 {
				s.faults = slices.Delete(s.faults, i, i+1)
			}
			return f
		}
	}
	return nil
}

func (s *Server) writeFault(w http.ResponseWriter, f *Fault) {
	for k, v := range f.Header {
		w.Header()[k] = v
	}
	writeError(w, f.Status, http.StatusText(f.Status), f.Message)
}

// setRateHeaders mirrors the documented RateLimit-* headers.
func setRateHeaders(h http.Header) {
	h.Set("RateLimit-Limit", "5000")
	h.Set("RateLimit-Remaining", "4999")
	h.Set("RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
}

func writeError(w http.ResponseWriter, status int, id, message string) {
	writeJSON(w, status, map[string]string{"id": id, "message": message, "request_id": fmt.Sprintf("req-%d", status)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
