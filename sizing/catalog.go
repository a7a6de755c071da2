package sizing

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the hand-written list prices below were taken.
const priceDate = "2026-11"

// overridePriceDate marks a price the user set instead of the list price.
const overridePriceDate = "override"

// row is one catalog line as written by hand; build turns it into an
// InstanceType with the provider's overhead rule.
type row struct {
	name, family string
	vCPU         int64
	memoryMiB    int64
	gpus         int64
	gpuModel     string
	maxPods      int64
	hourly       float64
}

func (r row) instanceType(overhead func(milliCPU, memory, maxPods int64) types.Resources) types.InstanceType {
	cpu, mem := r.vCPU*1000, r.memoryMiB*types.MiB
	return types.InstanceType{
		Name: r.name, Family: r.family,
		MilliCPU: cpu, Memory: mem, GPUs: r.gpus, GPUModel: r.gpuModel,
		MaxPods:     r.maxPods,
		HourlyPrice: r.hourly, PriceDate: priceDate,
		Overhead: overhead(cpu, mem, r.maxPods),
	}
}

func buildCatalog(rows []row, overhead func(milliCPU, memory, maxPods int64) types.Resources) []types.InstanceType {
	out := make([]types.InstanceType, len(rows))
	for i, r := range rows {
		out[i] = r.instanceType(overhead)
	}
	return out
}

// Providers whose catalog is built in; vSphere's comes from configuration.
var builtinCatalogs = map[string]func() []types.InstanceType{
	"digitalocean": DigitalOceanCatalog,
	"aws":          AWSCatalog,
	"hetzner":      HetznerCatalog,
	"sim":          SimCatalog,
}

// CatalogFor returns the built-in catalog of a provider.
func CatalogFor(provider string) ([]types.InstanceType, error) {
	if f, ok := builtinCatalogs[provider]; ok {
		return f(), nil
	}
	known := make([]string, 0, len(builtinCatalogs))
	for name := range builtinCatalogs {
		known = append(known, name)
	}
	slices.Sort(known)
	if provider == "vsphere" {
		return nil, errors.New(`provider "vsphere" has no built-in catalog: its sizes are the templates in configuration (use VSphereCatalog)`)
	}
	return nil, fmt.Errorf("no catalog for provider %q (known: %s)", provider, strings.Join(known, ", "))
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
