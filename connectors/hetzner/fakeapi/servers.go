package fakeapi

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// hostname is what the API accepts as a server name.
var hostname = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)

func (s *Server) listServers(w http.ResponseWriter, r *http.Request) {
	match, err := parseSelector(r.URL.Query().Get("label_selector"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_input", err.Error())
		return
	}
	name := r.URL.Query().Get("name")
	var out []schema.Server
	for _, sv := range s.servers {
		if match(sv.Labels) && (name == "" || sv.Name == name) {
			out = append(out, copyServer(sv))
		}
	}
	writeJSON(w, http.StatusOK, page(r, "servers", out))
}

func (s *Server) find(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	i := slices.IndexFunc(s.servers, func(sv *schema.Server) bool { return sv.ID == id })
	if i < 0 {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("server with ID '%s' not found", r.PathValue("id")))
	}
	return i, i >= 0
}

func (s *Server) getServer(w http.ResponseWriter, r *http.Request) {
	if i, ok := s.find(w, r); ok {
		writeJSON(w, http.StatusOK, map[string]any{"server": copyServer(s.servers[i])})
	}
}

func (s *Server) deleteServer(w http.ResponseWriter, r *http.Request) {
	i, ok := s.find(w, r)
	if !ok {
		return
	}
	sv := s.servers[i]
	s.servers = slices.Delete(s.servers, i, i+1)
	writeJSON(w, http.StatusOK, map[string]any{"action": s.action("delete_server", sv.ID)})
}

func (s *Server) createServer(w http.ResponseWriter, r *http.Request) {
	var req schema.ServerCreateRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "json_error", err.Error())
		return
	}
	if msg := s.invalid(&req); msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_input", msg)
		return
	}
	if slices.ContainsFunc(s.servers, func(sv *schema.Server) bool { return sv.Name == req.Name }) {
		writeError(w, http.StatusConflict, "uniqueness_error", "server name is already used")
		return
	}
	if slices.Contains(s.UnavailableTypes, req.ServerType.Name) {
		writeError(w, http.StatusPreconditionFailed, "resource_unavailable",
			fmt.Sprintf("server type %s is unavailable in %s", req.ServerType.Name, req.Location))
		return
	}
	sv := s.newServer(&req)
	s.creates = append(s.creates, req)
	writeJSON(w, http.StatusCreated, map[string]any{
		"server":        copyServer(sv),
		"action":        s.action("create_server", sv.ID),
		"next_actions":  []schema.Action{s.action("start_server", sv.ID)},
		"root_password": nil,
	})
}

// invalid names the first thing wrong with a create request, as the API's
// invalid_input does.
func (s *Server) invalid(req *schema.ServerCreateRequest) string {
	switch {
	case !hostname.MatchString(req.Name):
		return fmt.Sprintf("name %q is not a valid hostname", req.Name)
	case ServerTypes[req.ServerType.Name] == [2]int{}:
		return fmt.Sprintf("server_type %q not found", req.ServerType.Name)
	case req.Image.Name == "" && req.Image.ID == 0:
		return "image is required"
	}
	for _, id := range req.SSHKeys {
		if !slices.ContainsFunc(s.sshKeys, func(k schema.SSHKey) bool { return k.ID == id }) {
			return fmt.Sprintf("ssh_key %d not found", id)
		}
	}
	for _, id := range req.Networks {
		if !slices.ContainsFunc(s.networks, func(n schema.Network) bool { return n.ID == id }) {
			return fmt.Sprintf("network %d not found", id)
		}
	}
	if req.Labels != nil {
		for k, v := range *req.Labels {
			if !labelKey.MatchString(k) || !labelValue.MatchString(v) {
				return fmt.Sprintf("label %s=%s is not valid", k, v)
			}
		}
	}
	return ""
}

// newServer records a server as the API creates one: initializing, on a
// clock that advances a second per server so creation order is visible.
func (s *Server) newServer(req *schema.ServerCreateRequest) *schema.Server {
	s.lastID++
	s.clock = s.clock.Add(time.Second)
	spec := ServerTypes[req.ServerType.Name]
	sv := &schema.Server{
		ID: s.lastID, Name: req.Name, Status: "initializing", Created: s.clock,
		ServerType: schema.ServerType{Name: req.ServerType.Name, Cores: spec[0], Memory: float32(spec[1])},
		Location:   schema.Location{Name: req.Location},
		Image:      &schema.Image{Name: &req.Image.Name},
		Labels:     map[string]string{},
	}
	if req.Labels != nil {
		sv.Labels = maps.Clone(*req.Labels)
	}
	for _, id := range req.Networks {
		sv.PrivateNet = append(sv.PrivateNet, schema.ServerPrivateNet{Network: id, IP: fmt.Sprintf("10.0.0.%d", s.lastID%250+2)})
	}
	s.servers = append(s.servers, sv)
	return sv
}

func (s *Server) action(command string, serverID int64) schema.Action {
	s.lastID++
	return schema.Action{
		ID: s.lastID, Command: command, Status: "running", Started: s.clock,
		Resources: []schema.ActionResourceReference{{ID: serverID, Type: "server"}},
	}
}

func copyServer(sv *schema.Server) schema.Server {
	c := *sv
	c.Labels = maps.Clone(sv.Labels)
	c.PrivateNet = slices.Clone(sv.PrivateNet)
	return c
}

var (
	labelKey   = regexp.MustCompile(`^([a-z0-9A-Z]([-_.a-z0-9A-Z]{0,253}[a-z0-9A-Z])?/)?[a-z0-9A-Z]([-_.a-z0-9A-Z]{0,61}[a-z0-9A-Z])?$`)
	labelValue = regexp.MustCompile(`^([a-z0-9A-Z]([-_.a-z0-9A-Z]{0,61}[a-z0-9A-Z])?)?$`)
)

// parseSelector reads the documented label selector forms k=v, k==v,
// k!=v, k and !k, joined by commas.
func parseSelector(sel string) (func(map[string]string) bool, error) {
	var tests []func(map[string]string) bool
	for _, term := range strings.Split(sel, ",") {
		term = strings.TrimSpace(term)
		switch k, v, found := cutAny(term, "!=", "==", "="); {
		case term == "":
		case found == "!=":
			tests = append(tests, func(l map[string]string) bool { return l[k] != v })
		case found != "":
			tests = append(tests, func(l map[string]string) bool { got, ok := l[k]; return ok && got == v })
		case strings.HasPrefix(term, "!"):
			tests = append(tests, func(l map[string]string) bool { _, ok := l[term[1:]]; return !ok })
		case labelKey.MatchString(term):
			tests = append(tests, func(l map[string]string) bool { _, ok := l[term]; return ok })
		default:
			return nil, fmt.Errorf("label_selector term %q is not supported", term)
		}
	}
	return func(l map[string]string) bool {
		for _, t := range tests {
			if !t(l) {
				return false
			}
		}
		return true
	}, nil
}

// cutAny cuts s around the first of seps found, trying them in order.
func cutAny(s string, seps ...string) (before, after, found string) {
	for _, sep := range seps {
		if b, a, ok := strings.Cut(s, sep); ok {
			return strings.TrimSpace(b), strings.TrimSpace(a), sep
		}
	}
	return s, "", ""
}
