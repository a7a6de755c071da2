package sizing

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// overridePriceDate marks a price the user set instead of the list price.
const overridePriceDate = "override"

// CatalogRow is one catalog line as a connector writes it by hand;
// InstanceType turns it into a size with the provider's overhead rule.
// Each connector owns its rows (catalogs/<provider>.go).
type CatalogRow struct {
	Name, Family string
	VCPU         int64
	MemoryMiB    int64
	GPUs         int64
	GPUModel     string
	MaxPods      int64
	Hourly       float64
}

// Row is a CatalogRow written positionally, as catalog tables are.
func Row(name, family string, vCPU, memoryMiB, gpus int64, gpuModel string, maxPods int64, hourly float64) CatalogRow {
	return CatalogRow{name, family, vCPU, memoryMiB, gpus, gpuModel, maxPods, hourly}
}

// OverheadRule is a provider's per-node reservation for a node of this
// capacity (see StandardOverhead).
type OverheadRule func(milliCPU, memory, maxPods int64) types.Resources

// InstanceType is the row as a size whose list price dates from priceDate.
func (r CatalogRow) InstanceType(priceDate string, overhead OverheadRule) types.InstanceType {
	cpu, mem := r.VCPU*1000, r.MemoryMiB*types.MiB
	return types.InstanceType{
		Name: r.Name, Family: r.Family,
		MilliCPU: cpu, Memory: mem, GPUs: r.GPUs, GPUModel: r.GPUModel,
		MaxPods:     r.MaxPods,
		HourlyPrice: r.Hourly, PriceDate: priceDate,
		Overhead: overhead(cpu, mem, r.MaxPods),
	}
}

// BuildCatalog turns a connector's rows into a fresh catalog.
func BuildCatalog(priceDate string, rows []CatalogRow, overhead OverheadRule) []types.InstanceType {
	out := make([]types.InstanceType, len(rows))
	for i, r := range rows {
		out[i] = r.InstanceType(priceDate, overhead)
	}
	return out
}

// CheckCatalog reports every size a planner could not use: no name, a
// name repeated, negative capacity, a price that is not a price, overhead
// that leaves no room, GPUs without a model or a model without GPUs. A
// connector's test runs it over its built-in catalog.
func CheckCatalog(catalog []types.InstanceType) error {
	var errs []error
	seen := make(map[string]int, len(catalog))
	for i, t := range catalog {
		if j, dup := seen[t.Name]; dup {
			errs = append(errs, fmt.Errorf("size [%d] %q repeats size [%d]", i, t.Name, j))
		}
		seen[t.Name] = i
		if why := unusable(t); why != "" {
			errs = append(errs, fmt.Errorf("size [%d] %q %s", i, t.Name, why))
		}
		if (t.GPUs > 0) != (t.GPUModel != "") {
			errs = append(errs, fmt.Errorf("size [%d] %q: %d GPUs of model %q", i, t.Name, t.GPUs, t.GPUModel))
		}
	}
	return errors.Join(errs...)
}

// Restrict keeps only the allowed sizes, in catalog order. An empty allowed
// list means every size, as in types.Policy.AllowedSizes. A name that is
// not in the catalog is an error naming it: a typo must not silently leave
// a pool with fewer sizes than its owner thinks.
func Restrict(catalog []types.InstanceType, allowed []string) ([]types.InstanceType, error) {
	if len(allowed) == 0 {
		return slices.Clone(catalog), nil
	}
	want := make(map[string]bool, len(allowed))
	for i, name := range allowed {
		if name == "" {
			return nil, fmt.Errorf("allowed size [%d] is empty", i)
		}
		want[name] = true
	}
	out := make([]types.InstanceType, 0, len(want))
	for _, t := range catalog {
		if want[t.Name] {
			out = append(out, t)
			delete(want, t.Name)
		}
	}
	if len(want) > 0 {
		return nil, fmt.Errorf("allowed sizes not in the catalog: %s", strings.Join(sortedKeys(want), ", "))
	}
	return out, nil
}

// adjustedPriceDate marks a list price a price adjustment changed.
const adjustedPriceDate = "adjusted"

// AdjustPrices returns a copy of catalog with the price adjustments
// applied (types.AdjustedPrice: the most specific entry per size) to the
// sizes OverridePrices left at their list price, on demand only: spot
// follows the market, not a contract. A size or family an entry names
// that the catalog (restricted to the pool's allowed sizes) lacks matches
// nothing: an org's entries name the sizes of all its pools.
func AdjustPrices(catalog []types.InstanceType, adjs []types.PriceAdjustment) ([]types.InstanceType, error) {
	if len(adjs) == 0 {
		return catalog, nil
	}
	if err := types.ValidatePriceAdjustments("priceAdjustments", adjs, true); err != nil {
		return nil, err
	}
	out := slices.Clone(catalog)
	for i := range out {
		if out[i].PriceDate == overridePriceDate {
			continue
		}
		p, ok := types.AdjustedPrice(adjs, out[i].Name, out[i].Family, out[i].HourlyPrice)
		if !ok {
			continue
		}
		out[i].HourlyPrice = p
		out[i].PriceDate = adjustedPriceDate
		if len(out[i].Offerings) > 0 {
			out[i].Offerings = slices.Clone(out[i].Offerings)
			for j := range out[i].Offerings {
				if o := &out[i].Offerings[j]; o.CapacityType.Or() == types.CapacityOnDemand {
					o.HourlyPrice, _ = types.AdjustedPrice(adjs, out[i].Name, out[i].Family, o.HourlyPrice)
				}
			}
		}
	}
	return out, nil
}

// OverridePrices returns a copy of catalog with the user's prices (US
// dollars per node-hour) in place of list prices. Every name must be in the
// catalog and every price finite and not negative; on error nothing is
// returned, so a bad override never half-applies.
func OverridePrices(catalog []types.InstanceType, prices map[string]float64) ([]types.InstanceType, error) {
	index := make(map[string]int, len(catalog))
	for i, t := range catalog {
		if _, dup := index[t.Name]; !dup {
			index[t.Name] = i
		}
	}
	var errs []error
	for _, name := range sortedKeys(prices) {
		p := prices[name]
		if _, ok := index[name]; !ok {
			errs = append(errs, fmt.Errorf("price override for %q: no such size in the catalog", name))
		}
		if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			errs = append(errs, fmt.Errorf("price override for %q: %v is not a price (must be finite and >= 0)", name, p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := slices.Clone(catalog)
	for i := range out {
		if p, ok := prices[out[i].Name]; ok {
			out[i].HourlyPrice = p
			out[i].PriceDate = overridePriceDate
			// The override is the size's on-demand price; spot keeps the
			// catalog's, which follows the market, not a contract.
			if len(out[i].Offerings) > 0 {
				out[i].Offerings = slices.Clone(out[i].Offerings)
				for j := range out[i].Offerings {
					if out[i].Offerings[j].CapacityType.Or() == types.CapacityOnDemand {
						out[i].Offerings[j].HourlyPrice = p
					}
				}
			}
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
