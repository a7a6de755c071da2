// Package fakearm is an in-memory Azure Resource Manager for the scale set
// calls the azure connector makes, built on the armcompute SDK's own fake
// server (armcompute/v6/fake), which is how Azure documents testing
// without Azure: the SDK's real clients, pollers and pagers run against
// it in process. It holds one resource group's scale sets and their VMs,
// answers long-running operations after PendingPolls polls, and serves a
// Microsoft Entra ID token endpoint so the real azidentity client-secret
// credential logs in (and is refused for a wrong secret). Faults can be
// injected per operation, including ones applied before their error.
package fakearm

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v6/fake"
)

// AuthorityHost is the login host to configure (azure.Config.AuthorityHost).
const AuthorityHost = "https://login.fakearm.test/"

// accessToken is what the token endpoint issues and ARM accepts.
const accessToken = "fakearm-access-token"

// Operations faults name.
const (
	OpGet             = "Get"
	OpList            = "List"
	OpListVMs         = "ListVMs"
	OpCreateOrUpdate  = "CreateOrUpdate"
	OpUpdate          = "Update"
	OpDelete          = "Delete"
	OpDeleteInstances = "DeleteInstances"
)

// Fault makes calls of Op (any when empty) answer Status with Code.
type Fault struct {
	Op     string
	Status int
	Code   string
	// Times is how many calls it hits; zero means once.
	Times int
	// AfterApply applies the call first, so its answer is what is lost.
	AfterApply bool
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// UnavailableSizes are refused on create or scale-up with SkuNotAvailable.
	UnavailableSizes []string
	// PendingPolls is how many times a long-running operation answers
	// "in progress" before it finishes.
	PendingPolls int

	tenant, client, secret string
	factory                fake.ServerFactory
	arm                    *fake.ServerFactoryTransport

	mu      sync.Mutex
	sets    map[string]*scaleSet
	faults  []*Fault
	revoked bool
	calls   []string
}

// New makes a fake that accepts the service principal tenant:client:secret.
func New(tenant, client, secret string) *Server {
	s := &Server{tenant: tenant, client: client, secret: secret, sets: map[string]*scaleSet{}, PendingPolls: 1}
	s.bind()
	s.arm = fake.NewServerFactoryTransport(&s.factory)
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

// Revoke makes ARM refuse every token from now on, as after the
// principal's secret was rotated or its role removed.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
}

// Calls lists the operations served, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Do serves ARM and the token endpoint: the transport to hand the SDK.
func (s *Server) Do(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(AuthorityHost, req.URL.Scheme+"://"+req.URL.Host) {
		return s.login(req)
	}
	s.mu.Lock()
	revoked := s.revoked
	s.mu.Unlock()
	if revoked || req.Header.Get("Authorization") != "Bearer "+accessToken {
		return armError(req, http.StatusUnauthorized, "InvalidAuthenticationToken", "The access token is invalid."), nil
	}
	return s.arm.Do(req)
}

// login is Entra ID's discovery document and client-credentials token
// endpoint for the one tenant.
func (s *Server) login(req *http.Request) (*http.Response, error) {
	base := strings.TrimSuffix(AuthorityHost, "/") + "/" + s.tenant
	switch {
	case strings.HasSuffix(req.URL.Path, "/.well-known/openid-configuration"):
		return jsonResponse(req, http.StatusOK, fmt.Sprintf(`{"token_endpoint":%q,"authorization_endpoint":%q,"issuer":%q,"tenant_region_scope":"WW"}`,
			base+"/oauth2/v2.0/token", base+"/oauth2/v2.0/authorize", base+"/v2.0")), nil
	case strings.HasSuffix(req.URL.Path, "/oauth2/v2.0/token"):
		body, _ := io.ReadAll(req.Body)
		form, _ := url.ParseQuery(string(body))
		if !strings.HasPrefix(req.URL.Path, "/"+s.tenant+"/") || form.Get("client_id") != s.client || form.Get("client_secret") != s.secret {
			return jsonResponse(req, http.StatusUnauthorized, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided.","error_codes":[7000215]}`), nil
		}
		return jsonResponse(req, http.StatusOK, `{"token_type":"Bearer","expires_in":3600,"ext_expires_in":3600,"access_token":"`+accessToken+`"}`), nil
	}
	return jsonResponse(req, http.StatusNotFound, `{"error":"not_found"}`), nil
}

func jsonResponse(req *http.Request, status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
		Request: req, ContentLength: int64(len(body)),
	}
}

func armError(req *http.Request, status int, code, message string) *http.Response {
	r := jsonResponse(req, status, fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`, code, message))
	r.Header.Set("x-ms-error-code", code)
	return r
}

// take returns the fault a call of op hits, if any. Called with s.mu held.
func (s *Server) take(op string) *Fault {
	s.calls = append(s.calls, op)
	for i, f := range s.faults {
		if f.Op != "" && f.Op != op {
			continue
		}
		f.Times--
		if f.Times <= 0 {
			s.faults = slices.Delete(s.faults, i, i+1)
		}
		return f
	}
	return nil
}

// Machines counts the VMs, not being deleted, of scale sets whose tag
// key has value.
func (s *Server) Machines(key, value string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, set := range s.sets {
		if v := set.model.Tags[key]; v != nil && *v == value {
			n += len(set.vms)
		}
	}
	return n
}

// ScaleSets returns copies of the scale sets, by name.
func (s *Server) ScaleSets() map[string]armcompute.VirtualMachineScaleSet {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]armcompute.VirtualMachineScaleSet{}
	for name, set := range s.sets {
		out[name] = clone(set.model)
	}
	return out
}
