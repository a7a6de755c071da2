// Package fakecompute is a loopback stand-in for the part of the Compute
// Engine REST API (compute/v1) the gcp connector uses, following its
// reference: instanceTemplates insert/get/delete, zonal
// instanceGroupManagers insert/get/list (filter "name eq RE2")/delete,
// resize, deleteInstances (skipInstancesOnValidationError) and
// listManagedInstances (paged), instances list (filter
// "labels.visor-group eq NAME", for creation times), zone and global operations get and wait,
// and Google's OAuth 2.0 token endpoint for a service account's signed JWT
// (RS256, verified against the account's public key).
//
// Every mutating call answers an Operation that is RUNNING for a few more
// requests (PendingRequests) before it is DONE and takes effect; a
// repeated requestId answers the first call's operation and changes
// nothing. A MIG makes instances up to its target when an operation ends:
// each is a managed-instance record that is CREATING (PROVISIONING) for a
// few requests, then RUNNING. A record the fake refuses (SetQuota,
// SetUnavailable) stays CREATING with no VM and lastAttempt errors
// QUOTA_EXCEEDED or ZONE_RESOURCE_POOL_EXHAUSTED, and is retried on every
// request, as a MIG retries. deleteInstances lowers the target at once
// and removes the VMs when its operation ends. Errors are Google's JSON
// error bodies (code, message, errors[].reason: notFound, alreadyExists,
// invalid, resourceInUseByAnotherResource; 401 UNAUTHENTICATED for a
// token it did not issue or revoked). Faults (fakehttp) can be injected
// in front.
//
// It does not model: regional MIGs, autoscalers, health checks and
// autohealing, stateful policies, instance flexibility, update rollouts
// (the template is never changed), instances outside MIGs, instance fields
// beyond name, ID, status, creationTimestamp and the group label, per-region CPU
// quotas (SetQuota is a count of VMs), other list filters than "name eq",
// IAM (any key it knows may do anything), the wait method's two-minute
// block (it answers at once, DONE or not), and request or operation rate
// limits (inject a fault for those).
package fakecompute

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// PendingRequests is how many requests an operation stays RUNNING and a
// new VM PROVISIONING, by default.
const PendingRequests = 2

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	fakehttp.Faults

	email string
	key   *rsa.PublicKey

	mu          sync.Mutex
	tokens      map[string]bool
	revoked     bool
	templates   map[string]*Template
	groups      map[string]*Group
	ops         []*operation
	byRequestID map[string]*operation
	seq         uint64
	quota       int // VMs that may exist; <0: no cap
	failNext    *operation
	unavailable map[string]bool
	// PendingRequests is how many requests operations and new VMs wait.
	pending int
	clock   time.Time
}

// Template is an instance template as stored.
type Template struct {
	Name, Description string
	Properties        json.RawMessage
}

// Group is a MIG as stored.
type Group struct {
	Name, Zone, Description, BaseInstanceName, InstanceTemplate string
	TargetSize                                                  int
	Instances                                                   []*Instance
}

// Instance is one managed-instance record; VM is false while the MIG has
// not managed to create it.
type Instance struct {
	ID            uint64
	Name          string
	VM            bool
	Status        string // PROVISIONING, RUNNING; "" without a VM
	Action        string // CREATING, NONE, DELETING
	Errors        []AttemptError
	Created       time.Time // when the VM was made
	bootRemaining int
}

// AttemptError is a lastAttempt error of a record.
type AttemptError struct{ Code, Message string }

type operation struct {
	ID            uint64
	Name, Zone    string
	Type, Target  string
	remaining     int
	done          bool
	effect        func()
	insertTime    time.Time
	httpErrStatus int
	errs          []AttemptError
}

// New starts a fake project that accepts the service account whose
// client_email is email and whose key pair holds pub.
func New(email string, pub *rsa.PublicKey) *Server {
	s := &Server{
		email: email, key: pub, tokens: map[string]bool{}, templates: map[string]*Template{}, groups: map[string]*Group{},
		byRequestID: map[string]*operation{}, quota: -1, unavailable: map[string]bool{}, pending: PendingRequests,
		clock: time.Now().UTC().Truncate(time.Second), // machines are as old as the test
	}
	s.Server = httptest.NewServer(s.Wrap(http.HandlerFunc(s.serve)))
	return s
}

// Endpoint is the base URL to configure (option.WithEndpoint).
func (s *Server) Endpoint() string { return s.URL + "/compute/v1/" }

// TokenURL is the token endpoint a key file names as token_uri.
func (s *Server) TokenURL() string { return s.URL + "/token" }

// SetPending sets how many requests operations and new VMs wait.
func (s *Server) SetPending(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = n
}

// SetQuota caps the VMs of the project at n (QUOTA_EXCEEDED beyond);
// a negative n lifts the cap.
func (s *Server) SetQuota(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota = n
}

// SetUnavailable makes the zone out of the machine type
// (ZONE_RESOURCE_POOL_EXHAUSTED), or lifts that.
func (s *Server) SetUnavailable(machineType string, out bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable[machineType] = out
}

// FailNextOperation makes the next mutating call's operation end DONE
// with that error (and no effect), as Compute reports a refusal found
// after the call was accepted.
func (s *Server) FailNextOperation(httpStatus int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = &operation{httpErrStatus: httpStatus, errs: []AttemptError{{code, message}}}
}

// Revoke deletes the service account's key: tokens issued stop working
// and no new one is issued.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
	s.tokens = map[string]bool{}
}

// Machines counts the VMs, not being deleted, of the MIGs whose names
// start with prefix.
func (s *Server) Machines(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for name, g := range s.groups {
		if strings.HasPrefix(name, prefix) {
			for _, in := range g.Instances {
				if in.VM && in.Action != "DELETING" {
					n++
				}
			}
		}
	}
	return n
}

// Groups copies the MIGs, by name.
func (s *Server) Groups() map[string]Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]Group{}
	for name, g := range s.groups {
		c := *g
		c.Instances = nil
		for _, in := range g.Instances {
			cp := *in
			c.Instances = append(c.Instances, &cp)
		}
		out[name] = c
	}
	return out
}

// Templates copies the instance templates, by name.
func (s *Server) Templates() map[string]Template {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]Template{}
	for name, t := range s.templates {
		out[name] = *t
	}
	return out
}

// KeyFile is a service account key file for the account, its token_uri
// the fake's, as the console writes one.
func KeyFile(email, tokenURL string, key *rsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	b, _ := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": "visor-test", "private_key_id": "0123456789abcdef",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "100000000000000000001", "token_uri": tokenURL,
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "universe_domain": "googleapis.com",
	}, "", "  ")
	return b
}

type apiError struct {
	status          int
	reason, message string
}

func (e *apiError) write(w http.ResponseWriter) {
	status := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 409: "ALREADY_EXISTS"}[e.status]
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": e.status, "message": e.message, "status": status,
		"errors": []map[string]string{{"message": e.message, "domain": "global", "reason": e.reason}},
	}})
}

func notFound(what string) *apiError {
	return &apiError{http.StatusNotFound, "notFound", "The resource '" + what + "' was not found"}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		s.token(w, r)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick()
	if !s.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
		(&apiError{http.StatusUnauthorized, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."}).write(w)
		return
	}
	out, err := s.route(r)
	if err != nil {
		err.write(w)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(out)
}

var (
	zonalRE  = regexp.MustCompile(`^/compute/v1/projects/([^/]+)/zones/([^/]+)/(instanceGroupManagers|operations|instances)(?:/([^/]+))?(?:/([A-Za-z]+))?$`)
	globalRE = regexp.MustCompile(`^/compute/v1/projects/([^/]+)/global/(instanceTemplates|operations)(?:/([^/]+))?(?:/([A-Za-z]+))?$`)
)

func (s *Server) route(r *http.Request) (any, *apiError) {
	if m := zonalRE.FindStringSubmatch(r.URL.Path); m != nil {
		project, zone, kind, name, verb := m[1], m[2], m[3], m[4], m[5]
		switch {
		case kind == "operations":
			return s.getOp(name, zone, r.Method, verb)
		case kind == "instances" && r.Method == http.MethodGet && name == "":
			return s.listInstances(r, zone)
		}
		return s.groupCall(r, project, zone, name, verb)
	}
	if m := globalRE.FindStringSubmatch(r.URL.Path); m != nil {
		project, kind, name, verb := m[1], m[2], m[3], m[4]
		if kind == "operations" {
			return s.getOp(name, "", r.Method, verb)
		}
		return s.templateCall(r, project, name)
	}
	return nil, &apiError{http.StatusNotFound, "notFound", "The requested URL " + r.URL.Path + " was not found on this server."}
}

// tick moves every unfinished operation and booting VM one request on,
// and lets MIGs retry the records they could not create.
func (s *Server) tick() {
	s.clock = s.clock.Add(time.Second)
	for _, op := range s.ops {
		if !op.done {
			if op.remaining--; op.remaining <= 0 {
				op.done = true
				if op.effect != nil {
					op.effect()
				}
			}
		}
	}
	for _, g := range s.groups {
		for _, in := range g.Instances {
			switch {
			case in.VM && in.bootRemaining > 0:
				if in.bootRemaining--; in.bootRemaining == 0 {
					in.Status, in.Action = "RUNNING", "NONE"
				}
			case !in.VM && in.Action == "CREATING":
				s.attempt(g, in)
			}
		}
	}
}

// start registers an operation; a known requestId answers its first one.
func (s *Server) start(r *http.Request, zone, typ, target string, effect func()) (any, *apiError) {
	rid := r.URL.Query().Get("requestId")
	if op, ok := s.byRequestID[rid]; ok && rid != "" {
		return s.opJSON(op), nil
	}
	s.seq++
	op := &operation{ID: 7000000000000000000 + s.seq, Name: fmt.Sprintf("operation-%d-%06d", s.clock.UnixMilli(), s.seq),
		Zone: zone, Type: typ, Target: target, remaining: s.pending, effect: effect, insertTime: s.clock}
	if f := s.failNext; f != nil {
		s.failNext = nil
		op.effect, op.errs, op.httpErrStatus = nil, f.errs, f.httpErrStatus
	}
	if op.remaining <= 0 {
		op.done = true
		if op.effect != nil {
			op.effect()
		}
	}
	s.ops = append(s.ops, op)
	if rid != "" {
		s.byRequestID[rid] = op
	}
	return s.opJSON(op), nil
}

func (s *Server) opJSON(op *operation) map[string]any {
	out := map[string]any{
		"kind": "compute#operation", "id": strconv.FormatUint(op.ID, 10), "name": op.Name, "operationType": op.Type,
		"targetLink": s.URL + "/compute/v1/" + op.Target, "status": "RUNNING", "progress": 0,
		"insertTime": op.insertTime.Format(time.RFC3339), "user": s.email,
	}
	if op.Zone != "" {
		zoneURL := s.URL + "/compute/v1/" + strings.SplitN(op.Target, "/instanceGroupManagers", 2)[0]
		out["zone"], out["selfLink"] = zoneURL, zoneURL+"/operations/"+op.Name
	}
	if op.done {
		out["status"], out["progress"] = "DONE", 100
		if len(op.errs) > 0 {
			var errs []map[string]string
			for _, e := range op.errs {
				errs = append(errs, map[string]string{"code": e.Code, "message": e.Message})
			}
			out["error"] = map[string]any{"errors": errs}
			out["httpErrorStatusCode"] = op.httpErrStatus
		}
	}
	return out
}

func (s *Server) getOp(name, zone, method, verb string) (any, *apiError) {
	if !(method == http.MethodGet && verb == "") && !(method == http.MethodPost && verb == "wait") {
		return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid operation request."}
	}
	for _, op := range s.ops {
		if op.Name == name && op.Zone == zone {
			return s.opJSON(op), nil
		}
	}
	return nil, notFound("operations/" + name)
}

func (s *Server) templateCall(r *http.Request, project, name string) (any, *apiError) {
	path := "projects/" + project + "/global/instanceTemplates/"
	switch {
	case r.Method == http.MethodPost && name == "":
		var t Template
		if err := json.NewDecoder(r.Body).Decode(&t); err != nil || t.Name == "" || len(t.Properties) == 0 {
			return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'resource': the template needs a name and properties."}
		}
		if op, ok := s.byRequestID[r.URL.Query().Get("requestId")]; ok {
			return s.opJSON(op), nil
		}
		if s.templates[t.Name] != nil {
			return nil, &apiError{http.StatusConflict, "alreadyExists", "The resource '" + path + t.Name + "' already exists"}
		}
		return s.start(r, "", "insert", path+t.Name, func() { s.templates[t.Name] = &t })
	case r.Method == http.MethodGet && name != "":
		t := s.templates[name]
		if t == nil {
			return nil, notFound(path + name)
		}
		return map[string]any{"kind": "compute#instanceTemplate", "name": t.Name, "description": t.Description,
			"properties": t.Properties, "selfLink": s.URL + "/compute/v1/" + path + name}, nil
	case r.Method == http.MethodDelete && name != "":
		if s.templates[name] == nil {
			return nil, notFound(path + name)
		}
		for _, g := range s.groups {
			if lastSegment(g.InstanceTemplate) == name {
				return nil, &apiError{http.StatusBadRequest, "resourceInUseByAnotherResource",
					"The instance_template resource '" + path + name + "' is already being used by '" + g.Name + "'"}
			}
		}
		return s.start(r, "", "delete", path+name, func() { delete(s.templates, name) })
	}
	return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid request."}
}

func lastSegment(url string) string { return url[strings.LastIndex(url, "/")+1:] }

func (s *Server) groupCall(r *http.Request, project, zone, name, verb string) (any, *apiError) {
	base := "projects/" + project + "/zones/" + zone + "/instanceGroupManagers"
	if name == "" {
		switch r.Method {
		case http.MethodGet:
			return s.listGroups(r, zone)
		case http.MethodPost:
			return s.insertGroup(r, base, zone)
		}
		return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid request."}
	}
	g := s.groups[name]
	if g == nil || g.Zone != zone {
		if op, ok := s.byRequestID[r.URL.Query().Get("requestId")]; ok {
			return s.opJSON(op), nil // a repeat of a deletion that has ended
		}
		return nil, notFound(base + "/" + name)
	}
	target := base + "/" + name
	switch {
	case r.Method == http.MethodGet && verb == "":
		return s.groupJSON(g, base), nil
	case r.Method == http.MethodDelete && verb == "":
		if op, ok := s.byRequestID[r.URL.Query().Get("requestId")]; ok {
			return s.opJSON(op), nil
		}
		for _, in := range g.Instances {
			in.Action = "DELETING"
		}
		return s.start(r, zone, "delete", target, func() { delete(s.groups, name) })
	case r.Method == http.MethodPost && verb == "resize":
		size, err := strconv.Atoi(r.URL.Query().Get("size"))
		if err != nil || size < 0 {
			return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'size': '" + r.URL.Query().Get("size") + "'. Must be greater than or equal to 0"}
		}
		return s.start(r, zone, "compute.instanceGroupManagers.resize", target, func() { g.TargetSize = size; s.reconcile(g) })
	case r.Method == http.MethodPost && verb == "deleteInstances":
		return s.deleteInstances(r, g, zone, target)
	case r.Method == http.MethodPost && verb == "listManagedInstances":
		return s.listManaged(r, g, project, zone)
	}
	return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid request."}
}

func (s *Server) insertGroup(r *http.Request, base, zone string) (any, *apiError) {
	var in struct {
		Name, Description, BaseInstanceName, InstanceTemplate string
		TargetSize                                            *int
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Name == "" || in.BaseInstanceName == "" || in.TargetSize == nil {
		return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'resource': name, baseInstanceName and targetSize are required."}
	}
	if op, ok := s.byRequestID[r.URL.Query().Get("requestId")]; ok {
		return s.opJSON(op), nil
	}
	if s.groups[in.Name] != nil || s.pendingInsert(base+"/"+in.Name) {
		return nil, &apiError{http.StatusConflict, "alreadyExists", "The resource '" + base + "/" + in.Name + "' already exists"}
	}
	if s.templates[lastSegment(in.InstanceTemplate)] == nil {
		return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'resource.instanceTemplate': '" + in.InstanceTemplate + "'. The referenced instance template does not exist."}
	}
	g := &Group{Name: in.Name, Zone: zone, Description: in.Description, BaseInstanceName: in.BaseInstanceName,
		InstanceTemplate: in.InstanceTemplate, TargetSize: *in.TargetSize}
	return s.start(r, zone, "insert", base+"/"+in.Name, func() { s.groups[g.Name] = g; s.reconcile(g) })
}

func (s *Server) pendingInsert(target string) bool {
	return slices.ContainsFunc(s.ops, func(op *operation) bool { return !op.done && op.Type == "insert" && op.Target == target })
}

// reconcile makes the MIG hold its target: new records are attempted at
// once, the newest go first when it is lowered.
func (s *Server) reconcile(g *Group) {
	live := slices.DeleteFunc(slices.Clone(g.Instances), func(in *Instance) bool { return in.Action == "DELETING" })
	for n := len(live); n < g.TargetSize; n++ {
		s.seq++
		suffix := strconv.FormatUint(s.seq*7919%1679616, 36)
		in := &Instance{Name: g.BaseInstanceName + "-" + strings.Repeat("0", 4-len(suffix)) + suffix, Action: "CREATING"}
		g.Instances = append(g.Instances, in)
		s.attempt(g, in)
	}
	for n := len(live); n > g.TargetSize; n-- {
		doomed := live[n-1]
		g.Instances = slices.DeleteFunc(g.Instances, func(in *Instance) bool { return in == doomed })
	}
}

// attempt tries to create the record's VM.
func (s *Server) attempt(g *Group, in *Instance) {
	machineType := s.machineType(g)
	switch {
	case s.unavailable[machineType]:
		in.Errors = []AttemptError{{"ZONE_RESOURCE_POOL_EXHAUSTED", "The zone 'projects/p/zones/" + g.Zone +
			"' does not have enough resources available to fulfill the request.  Try a different zone, or try again later."}}
	case s.quota >= 0 && s.vms() >= s.quota:
		in.Errors = []AttemptError{{"QUOTA_EXCEEDED", fmt.Sprintf("Quota 'INSTANCES' exceeded.  Limit: %d.0 in region %s.", s.quota, g.Zone[:strings.LastIndex(g.Zone, "-")])}}
	default:
		s.seq++
		in.ID, in.VM, in.Status, in.Errors, in.bootRemaining = 5000000000000000000+s.seq, true, "PROVISIONING", nil, s.pending
		in.Created = s.clock
		if in.bootRemaining <= 0 {
			in.Status, in.Action = "RUNNING", "NONE"
		}
	}
}

func (s *Server) vms() int {
	n := 0
	for _, g := range s.groups {
		for _, in := range g.Instances {
			if in.VM {
				n++
			}
		}
	}
	return n
}

func (s *Server) machineType(g *Group) string {
	t := s.templates[lastSegment(g.InstanceTemplate)]
	if t == nil {
		return ""
	}
	var props struct{ MachineType string }
	_ = json.Unmarshal(t.Properties, &props)
	return props.MachineType
}

func (s *Server) groupJSON(g *Group, base string) map[string]any {
	creating, deleting, none := 0, 0, 0
	for _, in := range g.Instances {
		switch in.Action {
		case "CREATING":
			creating++
		case "DELETING":
			deleting++
		default:
			none++
		}
	}
	return map[string]any{
		"kind": "compute#instanceGroupManager", "name": g.Name, "description": g.Description, "zone": s.URL + "/compute/v1/" + strings.SplitN(base, "/instanceGroupManagers", 2)[0],
		"baseInstanceName": g.BaseInstanceName, "instanceTemplate": g.InstanceTemplate, "targetSize": g.TargetSize,
		"currentActions": map[string]int{"creating": creating, "deleting": deleting, "none": none},
		"status":         map[string]bool{"isStable": creating+deleting == 0},
		"selfLink":       s.URL + "/compute/v1/" + base + "/" + g.Name,
	}
}

// nameFilter reads the one filter form the fake knows: name eq RE2 (the
// whole name must match), optionally quoted.
var nameFilter = regexp.MustCompile(`^\(?\s*name\s+eq\s+"?([^"]+?)"?\s*\)?$`)

func (s *Server) listGroups(r *http.Request, zone string) (any, *apiError) {
	match := func(string) bool { return true }
	if f := r.URL.Query().Get("filter"); f != "" {
		m := nameFilter.FindStringSubmatch(f)
		if m == nil {
			return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'filter': '" + f + "'. Invalid list filter expression."}
		}
		re, err := regexp.Compile("^(?:" + m[1] + ")$")
		if err != nil {
			return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'filter': '" + f + "'."}
		}
		match = re.MatchString
	}
	var names []string
	for name, g := range s.groups {
		if g.Zone == zone && match(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	items := []map[string]any{}
	page, next := paginate(names, r.URL.Query().Get("pageToken"), 2)
	for _, name := range page {
		items = append(items, s.groupJSON(s.groups[name], strings.TrimPrefix(r.URL.Path, "/compute/v1/")))
	}
	out := map[string]any{"kind": "compute#instanceGroupManagerList", "items": items}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

// groupLabelFilter is the one instances filter the fake knows:
// labels.visor-group eq NAME.
var groupLabelFilter = regexp.MustCompile(`^labels\.visor-group\s+eq\s+"?([^"]+?)"?$`)

// listInstances lists the VMs of the MIG the filter names, each with the
// labels its template gave it and its creationTimestamp.
func (s *Server) listInstances(r *http.Request, zone string) (any, *apiError) {
	m := groupLabelFilter.FindStringSubmatch(r.URL.Query().Get("filter"))
	if m == nil {
		return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'filter': the fake lists instances by labels.visor-group only."}
	}
	items := []map[string]any{}
	if g := s.groups[m[1]]; g != nil && g.Zone == zone {
		for _, in := range g.Instances {
			if in.VM {
				items = append(items, map[string]any{
					"kind": "compute#instance", "id": strconv.FormatUint(in.ID, 10), "name": in.Name, "status": in.Status,
					"creationTimestamp": in.Created.Format(time.RFC3339), "labels": map[string]string{"visor-group": g.Name},
				})
			}
		}
	}
	page, next := paginate(items, r.URL.Query().Get("pageToken"), 2)
	out := map[string]any{"kind": "compute#instanceList", "items": page}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

// paginate pages by n, so the connector's paging is exercised.
func paginate[T any](all []T, token string, n int) (page []T, next string) {
	start, _ := strconv.Atoi(strings.TrimPrefix(token, "page-"))
	start = min(max(start, 0), len(all))
	end := min(start+n, len(all))
	if end < len(all) {
		next = fmt.Sprintf("page-%d", end)
	}
	return all[start:end], next
}

func (s *Server) listManaged(r *http.Request, g *Group, project, zone string) (any, *apiError) {
	rows := []map[string]any{}
	for _, in := range g.Instances {
		row := map[string]any{
			"instance":      s.URL + "/compute/v1/projects/" + project + "/zones/" + zone + "/instances/" + in.Name,
			"name":          in.Name,
			"currentAction": in.Action,
		}
		if in.VM {
			row["id"] = strconv.FormatUint(in.ID, 10)
			row["instanceStatus"] = in.Status
		}
		if len(in.Errors) > 0 {
			var errs []map[string]string
			for _, e := range in.Errors {
				errs = append(errs, map[string]string{"code": e.Code, "message": e.Message})
			}
			row["lastAttempt"] = map[string]any{"errors": map[string]any{"errors": errs}}
		}
		rows = append(rows, row)
	}
	page, next := paginate(rows, r.URL.Query().Get("pageToken"), 2)
	out := map[string]any{"managedInstances": page}
	if next != "" {
		out["nextPageToken"] = next
	}
	return out, nil
}

func (s *Server) deleteInstances(r *http.Request, g *Group, zone, target string) (any, *apiError) {
	var req struct {
		Instances                      []string
		SkipInstancesOnValidationError bool
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Instances) == 0 {
		return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'resource.instances': the list is empty."}
	}
	if op, ok := s.byRequestID[r.URL.Query().Get("requestId")]; ok {
		return s.opJSON(op), nil
	}
	var doomed []*Instance
	for _, url := range req.Instances {
		i := slices.IndexFunc(g.Instances, func(in *Instance) bool { return in.Name == lastSegment(url) && in.Action != "DELETING" })
		if i < 0 {
			if req.SkipInstancesOnValidationError {
				continue
			}
			return nil, &apiError{http.StatusBadRequest, "invalid", "Invalid value for field 'resource.instances[]': '" + url + "'. The instance is not a member of the group or is being deleted."}
		}
		doomed = append(doomed, g.Instances[i])
	}
	for _, in := range doomed {
		in.Action = "DELETING"
	}
	g.TargetSize = max(0, g.TargetSize-len(doomed))
	return s.start(r, zone, "compute.instanceGroupManagers.deleteInstances", target, func() {
		g.Instances = slices.DeleteFunc(g.Instances, func(in *Instance) bool { return slices.Contains(doomed, in) })
	})
}

// token is Google's OAuth 2.0 token endpoint for the JWT bearer grant: the
// assertion must be an RS256 JWT of the known account, signed by its key.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	refuse := func(desc string) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": desc})
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		refuse("Invalid grant_type.")
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		refuse("Invalid JWT.")
		return
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err2 := base64.RawURLEncoding.DecodeString(parts[2])
	var claims struct {
		Iss string `json:"iss"`
	}
	if err1 != nil || err2 != nil || json.Unmarshal(payload, &claims) != nil {
		refuse("Invalid JWT.")
		return
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	s.mu.Lock()
	defer s.mu.Unlock()
	if claims.Iss != s.email {
		refuse("Invalid JWT: the service account is not found.")
		return
	}
	if s.revoked || rsa.VerifyPKCS1v15(s.key, crypto.SHA256, sum[:], sig) != nil {
		refuse("Invalid JWT Signature.")
		return
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	tok := "ya29.fake-" + base64.RawURLEncoding.EncodeToString(b)
	s.tokens[tok] = true
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
}
