// Package fakelightsail is a loopback stand-in for the part of the Amazon
// Lightsail API (2016-11-28, AWS JSON 1.1: POST / with X-Amz-Target
// Lightsail_20161128.<Action>) the lightsail connector uses:
// CreateInstances (instanceNames, bundleId, blueprintId,
// availabilityZone, tags, userData), GetInstances (pageToken paging) and
// DeleteInstance (instanceName). moto_server has no Lightsail (5.2.1
// answers a Lightsail call with a 500 from its dispatcher), hence this
// fake. It checks each request's Signature Version 4 (the access key
// known, the signature recomputed with its secret over the signed
// headers and the body), and answers errors as Lightsail does:
// {"__type": "...Exception", "code", "message"} with
// InvalidInputException for a name in use, a bundle or blueprint it does
// not know and the account's instance limit ("Sorry, you've reached the
// maximum number of instances for your account."), OperationFailureException
// for a zone without capacity for the bundle, NotFoundException for an
// instance that does not exist, UnrecognizedClientException and
// InvalidSignatureException for a refused key. New instances are
// "pending" for a few requests before "running"; deleted ones
// "shutting-down" for a few before they are gone. Faults (fakehttp) can
// be injected in front; Action makes a fault match one action.
//
// It does not model: the operations CreateInstances and DeleteInstance
// answer (they are returned but GetOperation is not served), static IPs,
// add-ons, snapshots, key pairs (any name is taken), blueprint or bundle
// availability per zone beyond SetUnavailable, IAM policies (a known key
// may do anything), request throttling (inject a fault), user data (kept,
// never run), and more than one region.
package fakelightsail

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hanzoai/visor-fleet/connectors/fakehttp"
)

// targetPrefix is the X-Amz-Target of every action.
const targetPrefix = "Lightsail_20161128."

// Action matches a fakehttp.Fault to one Lightsail action.
func Action(name string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Header.Get("X-Amz-Target") == targetPrefix+name }
}

// Instance is one instance of the fake region.
type Instance struct {
	Name, Arn, Bundle, Blueprint, Zone, State, UserData string
	Created                                             time.Time
	Tags                                                map[string]string
	remaining                                           int
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	fakehttp.Faults

	accessKey, secretKey, region string

	mu          sync.Mutex
	revoked     bool
	instances   []*Instance
	seq         int
	clock       time.Time
	quota       int // instances that may exist; <0: no cap
	unavailable map[string]bool
	pending     int
}

// Bundles and Blueprints are what the fake region offers.
var (
	Bundles    = []string{"nano_3_0", "micro_3_0", "small_3_0", "medium_3_0", "large_3_0", "xlarge_3_0", "2xlarge_3_0", "4xlarge_3_0"}
	Blueprints = []string{"ubuntu_24_04", "ubuntu_22_04", "debian_12", "amazon_linux_2023"}
)

// New starts a fake region that accepts the access key pair.
func New(region, accessKey, secretKey string) *Server {
	s := &Server{accessKey: accessKey, secretKey: secretKey, region: region, quota: -1, unavailable: map[string]bool{}, pending: 2,
		clock: time.Now().UTC().Truncate(time.Second)} // machines are as old as the test
	s.Server = httptest.NewServer(s.Wrap(http.HandlerFunc(s.serve)))
	return s
}

// SetQuota caps the instances of the account; negative lifts the cap.
func (s *Server) SetQuota(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quota = n
}

// SetUnavailable makes the zones out of the bundle, or lifts that.
func (s *Server) SetUnavailable(bundle string, out bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable[bundle] = out
}

// Revoke deactivates the access key.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
}

// Instances copies the region's instances, oldest first.
func (s *Server) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Instance, len(s.instances))
	for i, in := range s.instances {
		out[i] = *in
	}
	return out
}

// Machines counts the instances, not shutting down, tagged key=value.
func (s *Server) Machines(key, value string) int {
	n := 0
	for _, in := range s.Instances() {
		if in.Tags[key] == value && in.State != "shutting-down" {
			n++
		}
	}
	return n
}

// AddInstance puts a running instance into the region as if made elsewhere.
func (s *Server) AddInstance(name, bundle string, tags map[string]string) Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.newInstance(name, bundle, "ubuntu_24_04", s.region+"a", "", tags)
	in.State, in.remaining = "running", 0
	return *in
}

func (s *Server) newInstance(name, bundle, blueprint, zone, userData string, tags map[string]string) *Instance {
	s.seq++
	s.clock = s.clock.Add(time.Minute)
	in := &Instance{Name: name, Bundle: bundle, Blueprint: blueprint, Zone: zone, State: "pending", UserData: userData,
		Arn:     fmt.Sprintf("arn:aws:lightsail:%s:123456789012:Instance/%08x-fake-4000-8000-%012d", s.region, s.seq, s.seq),
		Created: s.clock, Tags: tags, remaining: s.pending}
	s.instances = append(s.instances, in)
	return in
}

type apiError struct {
	status       int
	typ, message string
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick()
	var (
		out any
		err *apiError
	)
	if err = s.authenticate(r, body); err == nil {
		switch action := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), targetPrefix); action {
		case "CreateInstances":
			out, err = s.create(body)
		case "GetInstances":
			out, err = s.get(body)
		case "DeleteInstance":
			out, err = s.delete(body)
		default:
			err = &apiError{http.StatusBadRequest, "UnknownOperationException", "Unknown operation " + action}
		}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("fake-%08d", s.seq))
	if err != nil {
		w.WriteHeader(err.status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": err.typ, "code": strings.TrimSuffix(err.typ, "Exception"), "message": err.message})
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

// tick moves pending instances towards running and shutting-down ones
// towards gone, one request each.
func (s *Server) tick() {
	s.clock = s.clock.Add(time.Second)
	s.instances = slices.DeleteFunc(s.instances, func(in *Instance) bool {
		if in.remaining > 0 {
			in.remaining--
		}
		switch {
		case in.State == "pending" && in.remaining == 0:
			in.State = "running"
		case in.State == "shutting-down" && in.remaining == 0:
			return true
		}
		return false
	})
}

// authenticate checks AWS Signature Version 4 over the signed headers and
// the body.
func (s *Server) authenticate(r *http.Request, body []byte) *apiError {
	auth := r.Header.Get("Authorization")
	const alg = "AWS4-HMAC-SHA256 "
	fields := map[string]string{}
	for _, f := range strings.Split(strings.TrimPrefix(auth, alg), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		fields[k] = v
	}
	scope := strings.SplitN(fields["Credential"], "/", 2)
	if !strings.HasPrefix(auth, alg) || len(scope) != 2 {
		return &apiError{http.StatusBadRequest, "MissingAuthenticationTokenException", "Missing Authentication Token"}
	}
	if scope[0] != s.accessKey || s.revoked {
		return &apiError{http.StatusBadRequest, "UnrecognizedClientException", "The security token included in the request is invalid."}
	}
	amzDate := r.Header.Get("X-Amz-Date")
	var canon strings.Builder
	fmt.Fprintf(&canon, "%s\n%s\n%s\n", r.Method, cmpOr(r.URL.EscapedPath(), "/"), r.URL.RawQuery)
	signed := fields["SignedHeaders"]
	for _, h := range strings.Split(signed, ";") {
		v := r.Header.Get(h)
		switch h {
		case "host":
			v = r.Host
		case "content-length":
			v = strconv.FormatInt(r.ContentLength, 10)
		}
		fmt.Fprintf(&canon, "%s:%s\n", h, strings.TrimSpace(v))
	}
	sum := sha256.Sum256(body)
	fmt.Fprintf(&canon, "\n%s\n%s", signed, hex.EncodeToString(sum[:]))
	creq := sha256.Sum256([]byte(canon.String()))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope[1] + "\n" + hex.EncodeToString(creq[:])
	parts := strings.Split(scope[1], "/") // date/region/service/aws4_request
	key := []byte("AWS4" + s.secretKey)
	for _, p := range parts {
		key = hmacSHA256(key, p)
	}
	if len(parts) != 4 || parts[1] != s.region || parts[2] != "lightsail" ||
		!hmac.Equal([]byte(hex.EncodeToString(hmacSHA256(key, toSign))), []byte(fields["Signature"])) {
		return &apiError{http.StatusBadRequest, "InvalidSignatureException",
			"The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."}
	}
	return nil
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func invalid(msg string) *apiError {
	return &apiError{http.StatusBadRequest, "InvalidInputException", msg}
}

func (s *Server) create(body []byte) (any, *apiError) {
	var in struct {
		InstanceNames                           []string
		AvailabilityZone, BlueprintID, BundleID string
		UserData                                string
		Tags                                    []tag
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, invalid("The request body is not valid JSON.")
	}
	switch {
	case len(in.InstanceNames) == 0:
		return nil, invalid("Missing parameter: instanceNames")
	case !strings.HasPrefix(in.AvailabilityZone, s.region):
		return nil, invalid("The Availability Zone " + in.AvailabilityZone + " is not valid in region " + s.region)
	case !slices.Contains(Bundles, in.BundleID):
		return nil, invalid("The bundle ID " + in.BundleID + " does not exist")
	case !slices.Contains(Blueprints, in.BlueprintID):
		return nil, invalid("The blueprint ID " + in.BlueprintID + " does not exist")
	case len(in.Tags) > 50:
		return nil, invalid("Tags exceed the maximum of 50 per resource")
	}
	var taken []string
	for _, name := range in.InstanceNames {
		if slices.ContainsFunc(s.instances, func(i *Instance) bool { return i.Name == name }) {
			taken = append(taken, name)
		}
	}
	if len(taken) > 0 {
		return nil, invalid("Some names are already in use: " + strings.Join(taken, ", "))
	}
	if s.unavailable[in.BundleID] {
		return nil, &apiError{http.StatusBadRequest, "OperationFailureException",
			"We currently do not have sufficient capacity in the Availability Zone you requested (" + in.AvailabilityZone + ") for bundle " + in.BundleID + "."}
	}
	if s.quota >= 0 && len(s.instances)+len(in.InstanceNames) > s.quota {
		return nil, invalid("Sorry, you've reached the maximum number of instances for your account.")
	}
	var ops []map[string]any
	for _, name := range in.InstanceNames {
		tags := map[string]string{}
		for _, t := range in.Tags {
			tags[t.Key] = t.Value
		}
		i := s.newInstance(name, in.BundleID, in.BlueprintID, in.AvailabilityZone, in.UserData, tags)
		ops = append(ops, s.operation(i, "CreateInstance"))
	}
	return map[string]any{"operations": ops}, nil
}

func (s *Server) operation(i *Instance, typ string) map[string]any {
	return map[string]any{
		"id": fmt.Sprintf("%08x-op-4000-8000-%012d", s.seq, s.seq), "resourceName": i.Name, "resourceType": "Instance",
		"createdAt": float64(s.clock.Unix()), "location": map[string]string{"availabilityZone": i.Zone, "regionName": s.region},
		"isTerminal": false, "operationType": typ, "status": "Started",
	}
}

func (s *Server) get(body []byte) (any, *apiError) {
	var in struct{ PageToken string }
	_ = json.Unmarshal(body, &in)
	start := 0
	if in.PageToken != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(in.PageToken, "page-"))
		if err != nil || n < 0 || n > len(s.instances) {
			return nil, invalid("The page token is not valid.")
		}
		start = n
	}
	end := min(start+3, len(s.instances)) // small pages: the connector must follow them
	rows := []map[string]any{}
	for _, i := range s.instances[start:end] {
		tags := []tag{}
		for _, k := range slices.Sorted(maps.Keys(i.Tags)) {
			tags = append(tags, tag{k, i.Tags[k]})
		}
		code := map[string]int{"pending": 0, "running": 16, "shutting-down": 32, "terminated": 48}[i.State]
		rows = append(rows, map[string]any{
			"name": i.Name, "arn": i.Arn, "supportCode": fmt.Sprintf("123456789012/i-%017x", s.seq),
			"createdAt": float64(i.Created.Unix()), "location": map[string]string{"availabilityZone": i.Zone, "regionName": s.region},
			"resourceType": "Instance", "tags": tags, "blueprintId": i.Blueprint, "bundleId": i.Bundle,
			"state": map[string]any{"code": code, "name": i.State}, "username": "ubuntu",
		})
	}
	out := map[string]any{"instances": rows}
	if end < len(s.instances) {
		out["nextPageToken"] = fmt.Sprintf("page-%d", end)
	}
	return out, nil
}

func (s *Server) delete(body []byte) (any, *apiError) {
	var in struct{ InstanceName string }
	if err := json.Unmarshal(body, &in); err != nil || in.InstanceName == "" {
		return nil, invalid("Missing parameter: instanceName")
	}
	i := slices.IndexFunc(s.instances, func(i *Instance) bool { return i.Name == in.InstanceName })
	if i < 0 {
		return nil, &apiError{http.StatusBadRequest, "NotFoundException", "The Instance does not exist: " + in.InstanceName}
	}
	inst := s.instances[i]
	inst.State, inst.remaining = "shutting-down", s.pending
	return map[string]any{"operations": []map[string]any{s.operation(inst, "DeleteInstance")}}, nil
}
