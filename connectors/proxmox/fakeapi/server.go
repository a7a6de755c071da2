// Package fakeapi is a loopback stand-in for the part of the Proxmox VE
// API (/api2/json) the connector uses: GET /cluster/resources?type=vm,
// GET /cluster/nextid, POST .../qemu/{vmid}/clone, POST .../config (tags),
// POST .../status/start and /stop, DELETE .../qemu/{vmid} and GET
// /nodes/{node}/tasks/{upid}/status. It follows the API viewer and
// pveproxy's behaviour: PVEAPIToken auth (401 otherwise), answers wrapped
// in {"data": ...}, failures as status 500 with the reason in the status
// line, a UPID for every asynchronous call whose task stays "running"
// while the next TaskPolls requests (of any kind: the fake's clock is its
// traffic) and only then takes effect and stops with its exit status ("OK"
// or the failure), whether or not anyone polls it. A clone exists at once, locked
// "clone", until its task finishes. Faults (fakehttp) can be injected in
// front of it.
package fakeapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// VM is a QEMU VM or template of the fake cluster.
type VM struct {
	VMID     int
	Name     string
	Node     string
	Status   string // running, stopped
	Lock     string
	Tags     string
	Template bool
	CPUs     int
	MemMiB   int
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	// Faults injects failures in front of the API and logs requests.
	fakehttp.Faults

	token string // "USER@REALM!TOKENID=SECRET"
	nodes []string

	mu sync.Mutex
	// taskPolls is how many requests a task stays running for; default 2.
	taskPolls int
	vms       map[int]*VM
	tasks     map[string]*task
	failNext  map[string]string // task type -> exit status of the next such task
	pid       int
}

type task struct {
	node, upid string
	polls      int
	exit       string
	apply      func() string // takes effect when the task finishes; returns the exit status
}

// New starts a fake cluster of nodes that accepts the API token.
func New(token string, nodes ...string) *Server {
	s := &Server{token: token, nodes: nodes, taskPolls: 2, vms: map[int]*VM{}, tasks: map[string]*task{}, failNext: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api2/json/cluster/resources", s.resources)
	mux.HandleFunc("GET /api2/json/cluster/nextid", s.nextID)
	mux.HandleFunc("POST /api2/json/nodes/{node}/qemu/{vmid}/clone", s.clone)
	mux.HandleFunc("POST /api2/json/nodes/{node}/qemu/{vmid}/config", s.config)
	mux.HandleFunc("POST /api2/json/nodes/{node}/qemu/{vmid}/status/{action}", s.power)
	mux.HandleFunc("DELETE /api2/json/nodes/{node}/qemu/{vmid}", s.destroy)
	mux.HandleFunc("GET /api2/json/nodes/{node}/tasks/{upid}/status", s.taskStatus)
	s.Server = httptest.NewServer(s.Wrap(s.tick(s.auth(mux))))
	return s
}

// URL2 is the endpoint to configure: the server's URL plus /api2/json.
func (s *Server) URL2() string { return s.URL + "/api2/json" }

// SetTaskPolls sets how many requests a task stays running for.
func (s *Server) SetTaskPolls(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.taskPolls = n
}

// FailNextTask makes the next task of type (qmclone, qmstart, qmstop,
// qmdestroy, qmconfig) stop with exit status instead of taking effect.
func (s *Server) FailNextTask(taskType, exitStatus string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[taskType] = exitStatus
}

// AddVM puts a VM (or, with Template, a template) into the cluster.
func (s *Server) AddVM(v VM) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v.Status == "" {
		v.Status = "stopped"
	}
	s.vms[v.VMID] = &v
}

// VMs lists the cluster's VMs (not templates) by VM ID.
func (s *Server) VMs() []VM {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []VM
	for _, id := range s.sortedIDs() {
		if v := s.vms[id]; !v.Template {
			out = append(out, *v)
		}
	}
	return out
}

func (s *Server) sortedIDs() []int {
	ids := make([]int, 0, len(s.vms))
	for id := range s.vms {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// tick advances every running task by one request.
func (s *Server) tick(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		for _, t := range s.tasks {
			if t.polls > 0 {
				if t.polls--; t.polls == 0 {
					t.finish()
				}
			}
		}
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "PVEAPIToken="+s.token {
			fail(w, http.StatusUnauthorized, "authentication failure")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fail answers as pveproxy does: the reason in the status line, a body
// of {"data":null}. net/http writes only standard reason phrases, so the
// answer is written on the hijacked connection.
func fail(w http.ResponseWriter, code int, reason string) {
	body := `{"data":null}`
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, reason, code)
		return
	}
	defer conn.Close()
	writeRaw(buf, fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", code, reason, len(body), body))
}

func writeRaw(buf *bufio.ReadWriter, s string) {
	_, _ = buf.WriteString(s)
	_ = buf.Flush()
}

func reply(w http.ResponseWriter, data any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
}

func (s *Server) resources(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("type"); t != "" && t != "vm" {
		fail(w, http.StatusBadRequest, "Parameter verification failed.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := []map[string]any{}
	for _, id := range s.sortedIDs() {
		v := s.vms[id]
		row := map[string]any{
			"id": fmt.Sprintf("qemu/%d", v.VMID), "type": "qemu", "vmid": v.VMID, "name": v.Name, "node": v.Node,
			"status": v.Status, "template": boolInt(v.Template), "maxcpu": v.CPUs, "maxmem": v.MemMiB << 20,
		}
		if v.Tags != "" {
			row["tags"] = v.Tags
		}
		if v.Lock != "" {
			row["lock"] = v.Lock
		}
		rows = append(rows, row)
	}
	reply(w, rows)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) nextID(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := 100
	for s.vms[id] != nil {
		id++
	}
	reply(w, strconv.Itoa(id)) // the API answers a string
}

// vm finds the VM the path names on the path's node, or answers as
// pveproxy does when its config file is not there.
func (s *Server) vm(w http.ResponseWriter, r *http.Request) (*VM, bool) {
	node := r.PathValue("node")
	id, err := strconv.Atoi(r.PathValue("vmid"))
	if err != nil {
		fail(w, http.StatusBadRequest, "Parameter verification failed.")
		return nil, false
	}
	v := s.vms[id]
	if v == nil || v.Node != node {
		fail(w, http.StatusInternalServerError, fmt.Sprintf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, id))
		return nil, false
	}
	return v, true
}

func body(r *http.Request) map[string]any {
	m := map[string]any{}
	_ = json.NewDecoder(r.Body).Decode(&m)
	return m
}

func str(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func (s *Server) clone(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src, ok := s.vm(w, r)
	if !ok {
		return
	}
	args := body(r)
	newID, err := strconv.Atoi(str(args, "newid"))
	name, target := str(args, "name"), cmpOr(str(args, "target"), src.Node)
	switch {
	case err != nil || newID < 100:
		fail(w, http.StatusBadRequest, "Parameter verification failed.")
		return
	case !src.Template && src.Status == "running":
		fail(w, http.StatusInternalServerError, "can't clone VM to different node - VM is running")
		return
	case s.vms[newID] != nil:
		fail(w, http.StatusInternalServerError, fmt.Sprintf("unable to create VM %d: config file already exists", newID))
		return
	case !slices.Contains(s.nodes, target):
		fail(w, http.StatusInternalServerError, fmt.Sprintf("no such cluster node '%s'", target))
		return
	}
	clone := &VM{VMID: newID, Name: name, Node: target, Status: "stopped", Lock: "clone", Tags: src.Tags, CPUs: src.CPUs, MemMiB: src.MemMiB}
	s.vms[newID] = clone
	s.startTask(w, src.Node, "qmclone", src.VMID, func() string {
		clone.Lock = ""
		return "OK"
	}, func() { delete(s.vms, newID) })
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vm(w, r)
	if !ok {
		return
	}
	args := body(r)
	tags, set := args["tags"].(string)
	if v.Lock != "" {
		fail(w, http.StatusInternalServerError, fmt.Sprintf("VM is locked (%s)", v.Lock))
		return
	}
	s.startTask(w, v.Node, "qmconfig", v.VMID, func() string {
		if set {
			v.Tags = tags
		}
		return "OK"
	}, nil)
}

func (s *Server) power(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vm(w, r)
	if !ok {
		return
	}
	switch action := r.PathValue("action"); {
	case v.Lock != "":
		fail(w, http.StatusInternalServerError, fmt.Sprintf("VM is locked (%s)", v.Lock))
	case action == "start":
		s.startTask(w, v.Node, "qmstart", v.VMID, func() string {
			if v.Status == "running" {
				return fmt.Sprintf("VM %d already running", v.VMID)
			}
			v.Status = "running"
			return "OK"
		}, nil)
	case action == "stop":
		s.startTask(w, v.Node, "qmstop", v.VMID, func() string {
			v.Status = "stopped"
			return "OK"
		}, nil)
	default:
		fail(w, http.StatusNotImplemented, fmt.Sprintf("Method 'POST /nodes/%s/qemu/%d/status/%s' not implemented", v.Node, v.VMID, action))
	}
}

func (s *Server) destroy(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vm(w, r)
	if !ok {
		return
	}
	switch {
	case v.Status == "running":
		fail(w, http.StatusInternalServerError, fmt.Sprintf("VM %d is running - destroy failed", v.VMID))
		return
	case v.Lock != "":
		fail(w, http.StatusInternalServerError, fmt.Sprintf("VM is locked (%s)", v.Lock))
		return
	}
	v.Lock = "destroyed"
	s.startTask(w, v.Node, "qmdestroy", v.VMID, func() string {
		delete(s.vms, v.VMID)
		return "OK"
	}, func() { v.Lock = "" })
}

// startTask answers a UPID for a task that finishes after taskPolls
// polls. undo runs instead of apply when the task was set to fail.
func (s *Server) startTask(w http.ResponseWriter, node, typ string, vmid int, apply func() string, undo func()) {
	s.pid++
	upid := fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%s:%d:%s:", node, 4000+s.pid, 100000+s.pid, 1764600000+s.pid, typ, vmid, s.tokenUser())
	t := &task{node: node, upid: upid, polls: s.taskPolls, apply: apply}
	if exit, ok := s.failNext[typ]; ok {
		delete(s.failNext, typ)
		t.apply = func() string {
			if undo != nil {
				undo()
			}
			return exit
		}
	}
	s.tasks[upid] = t
	if t.polls <= 0 {
		t.finish()
	}
	reply(w, upid)
}

func (t *task) finish() {
	if t.exit == "" {
		t.exit = t.apply()
	}
}

func (s *Server) tokenUser() string {
	user, _, _ := strings.Cut(s.token, "=")
	return user
}

func (s *Server) taskStatus(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[r.PathValue("upid")]
	if t == nil || t.node != r.PathValue("node") {
		fail(w, http.StatusInternalServerError, "unable to parse worker upid")
		return
	}
	status := map[string]any{"upid": t.upid, "node": t.node, "status": "running"}
	if t.polls == 0 {
		status["status"], status["exitstatus"] = "stopped", t.exit
	}
	reply(w, status)
}
