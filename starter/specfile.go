package starter

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

// SpecFile is a pools.yaml: clusters to enroll and pools to register. The
// demo section is read only by `visor dev`'s simulated fleet.
type SpecFile struct {
	Clusters []contract.ClusterDeclared `json:"clusters,omitempty"`
	Pools    []PoolEntry                `json:"pools"`
	// Faults turns on provider fault injection in simulated clusters, by
	// cluster ID; read only by `visor dev`. Off when absent.
	Faults map[string]SimFaults `json:"faults,omitempty"`
	// Orgs are per-org limits across all the org's pools (node ceilings
	// per cluster and on the fabric, an hourly cost budget); see
	// docs/capacity-policies.md. Orgs not listed have no org limits.
	Orgs []types.OrgPolicy `json:"orgs,omitempty"`
	// PriceAdjustments apply to the pools of the org each names (every
	// pool when it names none), after each pool's own
	// policy.priceAdjustments: the org's commitments and discounts, once.
	PriceAdjustments []types.PriceAdjustment `json:"priceAdjustments,omitempty"`
}

// SimFaults are the faults one simulated cluster injects (see
// docs/faults.md), with the seed that makes their draws reproducible.
type SimFaults struct {
	types.FaultSpec `json:",inline"`
	Seed            int64 `json:"seed,omitempty"`
}

// PoolEntry is one pool in a spec file.
type PoolEntry struct {
	contract.PoolSpec `json:",inline"`
	// Demo drives the simulated fleet's demand for this pool.
	Demo *DemoDemand `json:"demo,omitempty"`
	// ExpiryDefaulted: the entry's policy does not write expireAfter, so
	// it holds DefaultExpireAfter. That default is for new pools only: a
	// pool already running keeps its own expireAfter (ApplyOptions).
	ExpiryDefaulted bool `json:"-"`
}

// DemoDemand describes simulated demand for `visor dev`: a shape and its
// numbers, as the simulated fleet's demand generator takes them.
type DemoDemand struct {
	Shape     string          `json:"shape"` // steady, diurnal, burst
	Pods      int             `json:"pods"`
	PeakPods  int             `json:"peakPods,omitempty"`
	Period    types.Duration  `json:"period,omitempty"`
	BurstPods int             `json:"burstPods,omitempty"`
	BurstFor  types.Duration  `json:"burstFor,omitempty"`
	Requests  types.Resources `json:"requests"`
}

// LoadSpecFile reads and validates a spec file as a whole: every error
// names the file, the pool and the field, and nothing is returned unless
// all of it is good.
func LoadSpecFile(path string) (SpecFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		// The path once: "pools.yaml: no such file or directory", not
		// "pools.yaml: open pools.yaml: …".
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return SpecFile{}, fmt.Errorf("%s: %w", path, err)
	}
	return ParseSpecFile(path, raw)
}

// ParseSpecFile is LoadSpecFile over bytes already read.
func ParseSpecFile(path string, raw []byte) (SpecFile, error) {
	// Unknown fields first: they are the commonest mistake, and this names
	// line, pool index and the field meant.
	if err := unknownFields(raw, reflect.TypeFor[SpecFile]()); err != nil {
		return SpecFile{}, prefixLines(path, namePools(raw, err))
	}
	var f SpecFile
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		return SpecFile{}, fmt.Errorf("%s: %s", path, decoderMessage(err))
	}
	// Which policy fields each pool wrote: a written zero is a choice
	// (no cooldown), a missing field takes the HIP default.
	var written struct {
		Pools []struct {
			Policy map[string]json.RawMessage `json:"policy"`
		} `json:"pools"`
	}
	if err := yaml.Unmarshal(raw, &written); err != nil {
		return SpecFile{}, fmt.Errorf("%s: %w", path, err)
	}
	var errs []error
	clusters := map[string]bool{}
	labels := map[string]string{}
	for i, c := range f.Clusters {
		if c.Phase == "" {
			f.Clusters[i].Phase = contract.PhaseActive
			c.Phase = contract.PhaseActive
		}
		if err := c.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: clusters[%d] (%s): %w", path, i, c.ID, err))
		}
		if clusters[c.ID] {
			errs = append(errs, fmt.Errorf("%s: clusters[%d]: cluster %s is declared twice", path, i, c.ID))
		}
		clusters[c.ID] = true
		if c.MetricsLabel != "" {
			if other, dup := labels[c.MetricsLabel]; dup {
				errs = append(errs, fmt.Errorf("%s: clusters[%d] (%s): metricsLabel %q is already used by cluster %s", path, i, c.ID, c.MetricsLabel, other))
			}
			labels[c.MetricsLabel] = c.ID
		}
	}
	errs = append(errs, orgProblems(path, f.Orgs)...)
	if err := types.ValidatePriceAdjustments("priceAdjustments", f.PriceAdjustments, true); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", path, err))
	}
	for _, id := range slices.Sorted(maps.Keys(f.Faults)) {
		errs = append(errs, faultProblems(path, id, f.Faults[id], f.Clusters)...)
	}
	seen := map[string]int{}
	for i := range f.Pools {
		e := &f.Pools[i]
		explicit := map[string]bool{}
		if i < len(written.Pools) {
			for name := range written.Pools[i].Policy {
				explicit[strings.ToLower(name)] = true
			}
		}
		e.Policy = e.Policy.WithDefaultsExcept(explicit)
		e.ExpiryDefaulted = !explicit["expireafter"]
		if e.Policy.OrgLimits != nil {
			errs = append(errs, fmt.Errorf("%s: pools[%d] (%s): policy.orgLimits: set the org's limits in the orgs section, not per pool", path, i, e.Key.WorkflowID()))
		}
		// The org's price adjustments follow the pool's own, which win
		// among equally specific ones.
		for _, a := range f.PriceAdjustments {
			if a.Org == "" || a.Org == e.Key.Org {
				a.Org = ""
				e.Policy.PriceAdjustments = append(e.Policy.PriceAdjustments, a)
			}
		}
		// The org's limits travel with each of its pools' policies.
		for _, o := range f.Orgs {
			if o.Org == e.Key.Org && (o.MaxNodes > 0 || o.MaxNodesPerCluster > 0) {
				lim := o
				e.Policy.OrgLimits = &lim
			}
		}
		name := e.Key.WorkflowID()
		if err := e.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: pools[%d] (%s): %w", path, i, name, err))
		}
		if j, dup := seen[name]; dup {
			errs = append(errs, fmt.Errorf("%s: pools[%d]: %s is also pools[%d]", path, i, name, j))
		}
		seen[name] = i
		if e.Demo != nil {
			if err := e.Demo.validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s: pools[%d] (%s): demo: %w", path, i, name, err))
			}
		}
	}
	if len(f.Pools) == 0 && len(f.Clusters) == 0 && len(f.Orgs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no pools and no clusters", path))
	}
	if err := errors.Join(errs...); err != nil {
		return SpecFile{}, err
	}
	return f, nil
}

// maxSpecOrgs bounds the orgs section.
const maxSpecOrgs = 10000

// orgProblems checks the orgs section: each org once, each limit in range.
func orgProblems(path string, orgs []types.OrgPolicy) []error {
	var errs []error
	if len(orgs) > maxSpecOrgs {
		return []error{fmt.Errorf("%s: orgs: lists %d orgs, at most %d", path, len(orgs), maxSpecOrgs)}
	}
	seen := map[string]int{}
	for i, o := range orgs {
		if err := o.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: orgs[%d] (%s): %w", path, i, o.Org, err))
		}
		if j, dup := seen[o.Org]; dup {
			errs = append(errs, fmt.Errorf("%s: orgs[%d]: org %s is also orgs[%d]", path, i, o.Org, j))
		}
		seen[o.Org] = i
	}
	return errs
}

// faultProblems checks one cluster's faults section: the cluster must be a
// declared sim cluster, and every bad field is named as written.
func faultProblems(path, id string, faults SimFaults, clusters []contract.ClusterDeclared) []error {
	i := slices.IndexFunc(clusters, func(c contract.ClusterDeclared) bool { return c.ID == id })
	switch {
	case i < 0:
		return []error{fmt.Errorf("%s: faults.%s: no cluster %q is declared under clusters", path, id, id)}
	case clusters[i].Provider != "sim":
		return []error{fmt.Errorf("%s: faults.%s: cluster %s has provider %q; faults are injected only into simulated (sim) clusters", path, id, id, clusters[i].Provider)}
	}
	var errs []error
	for _, p := range faults.Problems() {
		errs = append(errs, fmt.Errorf("%s: faults.%s.%s: %s", path, id, p.Field, p.Message))
	}
	return errs
}

func (d DemoDemand) validate() error {
	switch d.Shape {
	case "steady", "diurnal", "burst":
	default:
		return fmt.Errorf("shape %q is not steady, diurnal or burst", d.Shape)
	}
	if d.Pods < 0 || d.PeakPods < 0 || d.BurstPods < 0 {
		return errors.New("pods, peakPods and burstPods must not be negative")
	}
	if d.Requests.MilliCPU <= 0 || d.Requests.Memory <= 0 {
		return errors.New("requests needs milliCPU and memoryBytes above zero")
	}
	return nil
}

// prefixLines puts the file name before each joined error.
func prefixLines(path string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	errs := make([]error, len(lines))
	for i, l := range lines {
		errs[i] = fmt.Errorf("%s: %s", path, l)
	}
	return errors.Join(errs...)
}

// poolPath finds the first path into pools[N] in an error line.
var poolPath = regexp.MustCompile(`pools\[(\d+)\][\w.\[\]-]*`)

// namePools adds "of <pool ID>" after each path into pools[N] in err's
// lines, as the later checks name pools, so every value error names the
// file, the line, the pool and the field.
func namePools(raw []byte, err error) error {
	var keys struct {
		Pools []struct {
			Key types.PoolKey `json:"key"`
		} `json:"pools"`
	}
	_ = yaml.Unmarshal(raw, &keys) // best effort: the error is what matters
	lines := strings.Split(err.Error(), "\n")
	errs := make([]error, len(lines))
	for i, l := range lines {
		if m := poolPath.FindStringSubmatchIndex(l); m != nil {
			n, _ := strconv.Atoi(l[m[2]:m[3]])
			if n < len(keys.Pools) && keys.Pools[n].Key.Org != "" {
				l = l[:m[1]] + " of " + keys.Pools[n].Key.WorkflowID() + l[m[1]:]
			}
		}
		errs[i] = errors.New(l)
	}
	return errors.Join(errs...)
}

// decoderMessage drops the JSON layers sigs.k8s.io/yaml wraps around a
// decoding error: the file is YAML, and "while decoding JSON" misleads.
func decoderMessage(err error) string {
	msg := err.Error()
	for _, prefix := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	return msg
}
