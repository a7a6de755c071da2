package score

import (
	"fmt"
	"strings"

	"github.com/hanzoai/visor-fleet/catalogs"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// PoolFromSpec reads a pools.yaml (the file `visor pool apply` takes) and
// returns one pool's spec and the catalog its policy allows, priced as the
// pool would be. pool is its workflow ID; "" picks the only pool.
func PoolFromSpec(path, pool string) (contract.PoolSpec, []types.InstanceType, error) {
	f, err := starter.LoadSpecFile(path)
	if err != nil {
		return contract.PoolSpec{}, nil, err
	}
	var spec *contract.PoolSpec
	var ids []string
	for i := range f.Pools {
		id := f.Pools[i].Key.WorkflowID()
		ids = append(ids, id)
		if id == pool || (pool == "" && len(f.Pools) == 1) {
			spec = &f.Pools[i].PoolSpec
		}
	}
	switch {
	case spec == nil && pool == "":
		return contract.PoolSpec{}, nil, fmt.Errorf("%s: %d pools; name one with --pool (%s)", path, len(ids), strings.Join(ids, ", "))
	case spec == nil:
		return contract.PoolSpec{}, nil, fmt.Errorf("%s: no pool %s (have %s)", path, pool, strings.Join(ids, ", "))
	}
	catalog, err := catalogs.Of(spec.Key.Provider)
	if err != nil {
		return contract.PoolSpec{}, nil, fmt.Errorf("%s: pool %s: %w", path, spec.Key.WorkflowID(), err)
	}
	if catalog, err = sizing.Restrict(catalog, spec.Policy.AllowedSizes); err != nil {
		return contract.PoolSpec{}, nil, fmt.Errorf("%s: pool %s: policy.allowedSizes: %w", path, spec.Key.WorkflowID(), err)
	}
	if catalog, err = sizing.OverridePrices(catalog, spec.PriceOverrides); err != nil {
		return contract.PoolSpec{}, nil, fmt.Errorf("%s: pool %s: priceOverrides: %w", path, spec.Key.WorkflowID(), err)
	}
	if catalog, err = sizing.AdjustPrices(catalog, spec.Policy.PriceAdjustments); err != nil {
		return contract.PoolSpec{}, nil, fmt.Errorf("%s: pool %s: policy.%w", path, spec.Key.WorkflowID(), err)
	}
	return *spec, catalog, nil
}

// TraceOptions say how a trace file is turned into the demand replayed.
type TraceOptions struct {
	// CompressDay folds the openb trace's dense 34 days into one day.
	CompressDay bool
	// CPUOnly keeps the pods with num_gpu == 0.
	CPUOnly bool
}

// SyntheticPrefix names a built-in synthetic trace instead of a file:
// synthetic:diurnal, synthetic:bursty, synthetic:step (seed 1).
const SyntheticPrefix = "synthetic:"

// LoadTrace reads a trace in the openb pod-list format (or a built-in
// synthetic one) and applies opt.
func LoadTrace(path string, opt TraceOptions) (Trace, error) {
	var tr Trace
	var err error
	if name, ok := strings.CutPrefix(path, SyntheticPrefix); ok {
		var names []string
		for _, t := range SyntheticTraces(1) {
			names = append(names, t.Name)
			if t.Name == name {
				tr = t
			}
		}
		if tr.Name == "" {
			return Trace{}, fmt.Errorf("no synthetic trace %q (have %s)", name, strings.Join(names, ", "))
		}
		if opt.CompressDay {
			return Trace{}, fmt.Errorf("--compress-day applies to the openb trace, not %s", path)
		}
	} else if tr, err = ReadAlibabaFile(path); err != nil {
		return Trace{}, err
	}
	if opt.CompressDay {
		if tr, err = CompressAlibaba(tr); err != nil {
			return Trace{}, err
		}
	}
	if opt.CPUOnly {
		tr = tr.CPUOnly()
	}
	return tr, tr.Validate()
}
