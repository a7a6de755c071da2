// Package fakeapi is a loopback stand-in for the part of the Alibaba Cloud
// ECS OpenAPI (version 2014-05-26, RPC style) the connector uses:
// RunInstances (Amount, MinAmount, ClientToken, Tag.N, HostName with
// UniqueSuffix), DescribeInstances (Tag.N filters, MaxResults/NextToken
// paging) and DeleteInstances (InstanceId.N, Force). It follows the API
// reference: the action in the x-acs-action header (the SDK's V3
// signature style) with parameters in the query, JSON answers, errors as
// {"RequestId", "Code", "Message"} with the documented codes
// (InvalidAccessKeyId.NotFound, IdempotentParameterMismatch,
// InvalidInstanceId.NotFound, OperationDenied.NoStock, QuotaExceed.*,
// Throttling.User), a repeated ClientToken answering the first call's
// instances, and new instances Pending for a few requests before Running.
// It checks the AccessKey ID in the Authorization header but does not
// verify the signature. Faults (fakehttp) can be injected in front.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// Instance is one ECS instance of the fake region.
type Instance struct {
	ID, HostName, InstanceType, Status string
	Created                            time.Time
	Tags                               map[string]string
	pendingFor                         int
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	fakehttp.Faults

	accessKeyID string
	mu          sync.Mutex
	instances   []*Instance
	tokens      map[string]token // ClientToken -> the call it answered
	seq         int
	clock       time.Time
	// NoStock instance types are refused with OperationDenied.NoStock;
	// Quota caps how many instances may exist (0: no cap).
	noStock map[string]bool
	quota   int
	// PendingFor is how many requests a new instance stays Pending.
	pendingFor int
}

type token struct {
	params string
	ids    []string
}

// New starts a fake region that accepts the AccessKey ID.
func New(accessKeyID string) *Server {
	s := &Server{accessKeyID: accessKeyID, tokens: map[string]token{}, noStock: map[string]bool{}, pendingFor: 2,
		clock: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)}
	s.Server = httptest.NewServer(s.Wrap(http.HandlerFunc(s.serve)))
	return s
}

// Endpoint is the host:port to configure (with protocol http).
func (s *Server) Endpoint() string { return strings.TrimPrefix(s.URL, "http://") }

// SetNoStock makes RunInstances of the type fail with OperationDenied.NoStock.
func (s *Server) SetNoStock(instanceType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noStock[instanceType] = true
}

// SetQuota caps the instances of the region.
func (s *Server) SetQuota(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota = n
}

// AddInstance puts an instance into the region as if made elsewhere.
func (s *Server) AddInstance(hostName, instanceType string, tags map[string]string) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.newInstance(hostName, instanceType, tags)
	in.Status, in.pendingFor = "Running", 0
	return *in
}

// Instances lists the region's instances, oldest first.
func (s *Server) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Instance, len(s.instances))
	for i, in := range s.instances {
		out[i] = *in
	}
	return out
}

func (s *Server) newInstance(hostName, instanceType string, tags map[string]string) *Instance {
	s.seq++
	s.clock = s.clock.Add(time.Minute)
	in := &Instance{ID: fmt.Sprintf("i-fake%012d", s.seq), HostName: hostName, InstanceType: instanceType, Status: "Pending",
		Created: s.clock, Tags: tags, pendingFor: s.pendingFor}
	s.instances = append(s.instances, in)
	return in
}

type apiError struct {
	status        int
	code, message string
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := r.ParseForm(); err == nil {
		for k, v := range r.PostForm {
			q[k] = v
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range s.instances {
		if in.pendingFor > 0 {
			if in.pendingFor--; in.pendingFor == 0 {
				in.Status = "Running"
			}
		}
	}
	var (
		out any
		err *apiError
	)
	switch {
	case !strings.Contains(r.Header.Get("Authorization"), "Credential="+s.accessKeyID+","):
		err = &apiError{http.StatusNotFound, "InvalidAccessKeyId.NotFound", "Specified access key is not found."}
	case r.Header.Get("x-acs-version") != "2014-05-26":
		err = &apiError{http.StatusBadRequest, "InvalidVersion", "Specified parameter Version is not valid."}
	default:
		switch r.Header.Get("x-acs-action") {
		case "RunInstances":
			out, err = s.run(q)
		case "DescribeInstances":
			out, err = s.describe(q)
		case "DeleteInstances":
			out, err = s.delete(q)
		default:
			err = &apiError{http.StatusBadRequest, "InvalidAction.NotFound", "Specified api is not found, please check your url and method."}
		}
	}
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	requestID := fmt.Sprintf("FAKE-%06d", len(s.Requests()))
	if err != nil {
		w.WriteHeader(err.status)
		_ = json.NewEncoder(w).Encode(map[string]string{"RequestId": requestID, "HostId": r.Host, "Code": err.code, "Message": err.message})
		return
	}
	body := map[string]any{"RequestId": requestID}
	if m, ok := out.(map[string]any); ok {
		for k, v := range m {
			body[k] = v
		}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// indexed reads Name.1, Name.2, ... (or Name.N.Field).
func indexed(q url.Values, name, field string) []string {
	var out []string
	for i := 1; ; i++ {
		k := fmt.Sprintf("%s.%d", name, i)
		if field != "" {
			k += "." + field
		}
		if !q.Has(k) {
			return out
		}
		out = append(out, q.Get(k))
	}
}

func tagsOf(q url.Values) map[string]string {
	keys, values := indexed(q, "Tag", "Key"), indexed(q, "Tag", "Value")
	tags := map[string]string{}
	for i, k := range keys {
		if i < len(values) {
			tags[k] = values[i]
		}
	}
	return tags
}

func (s *Server) run(q url.Values) (any, *apiError) {
	for _, p := range []string{"RegionId", "ImageId", "InstanceType", "SecurityGroupId", "VSwitchId"} {
		if q.Get(p) == "" {
			return nil, &apiError{http.StatusBadRequest, "MissingParameter", "The input parameter \"" + p + "\" that is mandatory for processing this request is not supplied."}
		}
	}
	amount, err := strconv.Atoi(q.Get("Amount"))
	if err != nil || amount < 1 || amount > 100 {
		return nil, &apiError{http.StatusBadRequest, "InvalidParameter.Amount", "The specified parameter Amount is not valid."}
	}
	tags := tagsOf(q)
	if len(tags) > 20 {
		return nil, &apiError{http.StatusBadRequest, "InvalidTagCount", "The specified tags are beyond the permitted range."}
	}
	params := paramsKey(q)
	if tok := q.Get("ClientToken"); tok != "" {
		if prev, ok := s.tokens[tok]; ok {
			if prev.params != params {
				return nil, &apiError{http.StatusBadRequest, "IdempotentParameterMismatch", "The specified parameters are different from before."}
			}
			return instanceIDs(prev.ids), nil
		}
	}
	typ := q.Get("InstanceType")
	if s.noStock[typ] {
		return nil, &apiError{http.StatusForbidden, "OperationDenied.NoStock", "The requested resource is sold out in the specified zone; try other types of resources or other regions and zones."}
	}
	if s.quota > 0 && len(s.instances)+amount > s.quota {
		return nil, &apiError{http.StatusForbidden, "QuotaExceed.PostPaidInstance", "Living postPaid instances quota exceeded."}
	}
	var ids []string
	for range amount {
		host := q.Get("HostName")
		if q.Get("UniqueSuffix") == "true" {
			host += fmt.Sprintf("%03d", len(ids)+1)
		}
		ids = append(ids, s.newInstance(host, typ, tags).ID)
	}
	if tok := q.Get("ClientToken"); tok != "" {
		s.tokens[tok] = token{params: params, ids: ids}
	}
	return instanceIDs(ids), nil
}

func instanceIDs(ids []string) map[string]any {
	return map[string]any{"InstanceIdSets": map[string]any{"InstanceIdSet": ids}, "TradePrice": 0}
}

// paramsKey is the request's parameters other than its signature's, to
// tell a token's repeat from its misuse.
func paramsKey(q url.Values) string {
	var parts []string
	for k, v := range q {
		if k != "ClientToken" {
			parts = append(parts, k+"="+strings.Join(v, ","))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "&")
}

func (s *Server) describe(q url.Values) (any, *apiError) {
	want := tagsOf(q)
	var match []*Instance
	for _, in := range s.instances {
		ok := true
		for k, v := range want {
			ok = ok && in.Tags[k] == v
		}
		if ok {
			match = append(match, in)
		}
	}
	size := 10
	if n, err := strconv.Atoi(q.Get("MaxResults")); err == nil && n > 0 {
		size = min(n, 100)
	}
	start := 0
	if tok := q.Get("NextToken"); tok != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(tok, "page-"))
		if err != nil || n < 0 || n > len(match) {
			return nil, &apiError{http.StatusBadRequest, "InvalidParameter.NextToken", "The specified parameter NextToken is not valid."}
		}
		start = n
	}
	end := min(start+size, len(match))
	rows := []map[string]any{}
	for _, in := range match[start:end] {
		tags := []map[string]string{}
		for k, v := range in.Tags {
			tags = append(tags, map[string]string{"TagKey": k, "TagValue": v})
		}
		rows = append(rows, map[string]any{
			"InstanceId": in.ID, "InstanceName": in.HostName, "HostName": in.HostName, "InstanceType": in.InstanceType,
			"Status": in.Status, "CreationTime": in.Created.Format("2006-01-02T15:04Z"), "RegionId": q.Get("RegionId"),
			"Tags": map[string]any{"Tag": tags},
		})
	}
	next := ""
	if end < len(match) {
		next = fmt.Sprintf("page-%d", end)
	}
	return map[string]any{"Instances": map[string]any{"Instance": rows}, "TotalCount": len(match), "NextToken": next}, nil
}

func (s *Server) delete(q url.Values) (any, *apiError) {
	ids := indexed(q, "InstanceId", "")
	if len(ids) == 0 || len(ids) > 100 {
		return nil, &apiError{http.StatusBadRequest, "InvalidParameter.InstanceId", "The specified parameter InstanceId is not valid."}
	}
	for _, id := range ids {
		i := slices.IndexFunc(s.instances, func(in *Instance) bool { return in.ID == id })
		if i < 0 {
			return nil, &apiError{http.StatusNotFound, "InvalidInstanceId.NotFound", "The specified InstanceId does not exist."}
		}
		if s.instances[i].Status == "Running" && q.Get("Force") != "true" {
			return nil, &apiError{http.StatusForbidden, "IncorrectInstanceStatus", "The current status of the resource does not support this operation."}
		}
	}
	s.instances = slices.DeleteFunc(s.instances, func(in *Instance) bool { return slices.Contains(ids, in.ID) })
	return map[string]any{}, nil
}
