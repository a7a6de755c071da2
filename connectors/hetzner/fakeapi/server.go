// Package fakeapi is a loopback stand-in for the part of the Hetzner Cloud
// API the connector uses, under /v1: servers (list with label_selector,
// name and pagination; get; create; delete), SSH keys and networks by
// name. It follows the API reference: bearer-token auth, envelopes such as
// {"servers": [...], "meta": {"pagination": ...}}, create answering the
// server with its create_server action and next actions, delete answering
// a delete_server action, {"error": {"code", "message"}} errors
// (uniqueness_error for a taken server name, invalid_input, not_found,
// unauthorized), RateLimit-* headers on every answer. Faults (fakehttp) can
// be injected, including ones that apply a create before answering an
// error.
package fakeapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"

	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// ServerTypes the fake knows: cores and memory in GB.
var ServerTypes = map[string][2]int{
	"cx22": {2, 4}, "cx32": {4, 8}, "cx42": {8, 16}, "cpx31": {4, 8}, "ccx13": {2, 8},
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	// Faults injects failures in front of the API and logs requests.
	fakehttp.Faults

	// UnavailableTypes are refused on create with resource_unavailable.
	UnavailableTypes []string

	token    string
	mu       sync.Mutex
	servers  []*schema.Server
	sshKeys  []schema.SSHKey
	networks []schema.Network
	creates  []schema.ServerCreateRequest
	lastID   int64
	clock    time.Time
}

// New starts a fake that accepts token.
func New(token string) *Server {
	s := &Server{token: token, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.Server = httptest.NewServer(s.Wrap(http.HandlerFunc(s.serve)))
	return s
}

// URL1 is the endpoint to configure: the server's URL plus /v1.
func (s *Server) URL1() string { return s.URL + "/v1" }

// Fail injects fault with the API's error envelope.
func (s *Server) Fail(fault fakehttp.Fault, code, message string) {
	fault.Body = errorBody(code, message)
	s.Inject(fault)
}

// Servers returns copies of every server, oldest first.
func (s *Server) Servers() []schema.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]schema.Server, 0, len(s.servers))
	for _, sv := range s.servers {
		out = append(out, copyServer(sv))
	}
	return out
}

// CreateRequests returns the bodies of the creates that made a server.
func (s *Server) CreateRequests() []schema.ServerCreateRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.creates)
}

// AddServer seeds a running server as if created outside the test.
func (s *Server) AddServer(name, serverType string, labels map[string]string) schema.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := s.newServer(&schema.ServerCreateRequest{
		Name: name, ServerType: schema.IDOrName{Name: serverType}, Image: schema.IDOrName{Name: "ubuntu-24.04"},
		Location: "fsn1", Labels: &labels,
	})
	sv.Status = "running"
	return copyServer(sv)
}

// SetStatus sets a server's status, e.g. "running" or "deleting".
func (s *Server) SetStatus(name, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sv := range s.servers {
		if sv.Name == name {
			sv.Status = status
		}
	}
}

// AddSSHKey and AddNetwork seed named project resources; they return the ID.
func (s *Server) AddSSHKey(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID++
	s.sshKeys = append(s.sshKeys, schema.SSHKey{ID: s.lastID, Name: name, Fingerprint: "00:11", PublicKey: "ssh-ed25519 AAAA"})
	return s.lastID
}

func (s *Server) AddNetwork(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastID++
	s.networks = append(s.networks, schema.Network{ID: s.lastID, Name: name, IPRange: "10.0.0.0/16"})
	return s.lastID
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := w.Header()
	h.Set("RateLimit-Limit", "3600")
	h.Set("RateLimit-Remaining", "3599")
	h.Set("RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Second).Unix(), 10))
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		writeError(w, http.StatusUnauthorized, "unauthorized", "unable to authenticate")
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/servers", s.listServers)
	mux.HandleFunc("POST /v1/servers", s.createServer)
	mux.HandleFunc("GET /v1/servers/{id}", s.getServer)
	mux.HandleFunc("DELETE /v1/servers/{id}", s.deleteServer)
	mux.HandleFunc("GET /v1/ssh_keys", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, page(r, "ssh_keys", byName(s.sshKeys, r, func(k schema.SSHKey) string { return k.Name })))
	})
	mux.HandleFunc("GET /v1/networks", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, page(r, "networks", byName(s.networks, r, func(n schema.Network) string { return n.Name })))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no route")
	})
	mux.ServeHTTP(w, r)
}

// byName applies the ?name= filter.
func byName[T any](items []T, r *http.Request, name func(T) string) []T {
	want := r.URL.Query().Get("name")
	return slices.DeleteFunc(slices.Clone(items), func(it T) bool { return want != "" && name(it) != want })
}

// page cuts one page out of items and adds the documented pagination meta.
func page[T any](r *http.Request, key string, items []T) map[string]any {
	q := r.URL.Query()
	perPage, _ := strconv.Atoi(q.Get("per_page"))
	if perPage <= 0 {
		perPage = 25
	}
	perPage = min(perPage, 50)
	n, _ := strconv.Atoi(q.Get("page"))
	n = max(n, 1)
	last := max((len(items)+perPage-1)/perPage, 1)
	from, to := min((n-1)*perPage, len(items)), min(n*perPage, len(items))
	pageOrNil := func(p int) *int {
		if p < 1 || p > last {
			return nil
		}
		return &p
	}
	return map[string]any{
		key: items[from:to],
		"meta": map[string]any{"pagination": map[string]any{
			"page": n, "per_page": perPage, "previous_page": pageOrNil(n - 1), "next_page": pageOrNil(n + 1),
			"last_page": last, "total_entries": len(items),
		}},
	}
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(code, message))
}

func errorBody(code, message string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message, "details": nil}})
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
