// Package catalogs holds the providers' built-in lists of sizes with their
// list prices and node overheads: plain data and arithmetic over sizing,
// so the scorer and the law's tests reach a provider's catalog without
// linking its SDK. Each connector registers its catalog with its Kind.
package catalogs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/types"
)

// priceDate is when the list prices were taken (the sim's made-up prices
// carry it too, so a plan reads the same on either).
const priceDate = "2026-11"

// builtIn maps a provider kind, as pool keys name it, to its catalog.
// vSphere has none: its sizes are the templates its configuration names.
var builtIn = map[string]func() []types.InstanceType{
	"aws":          AWS,
	"digitalocean": DigitalOcean,
	"hetzner":      Hetzner,
	"sim":          Sim,
}

// Of returns the built-in catalog of a provider kind.
func Of(kind string) ([]types.InstanceType, error) {
	c, ok := builtIn[kind]
	if !ok {
		return nil, fmt.Errorf("provider %q has no built-in catalog (have %s)", kind, strings.Join(Kinds(), ", "))
	}
	return c(), nil
}

// Kinds lists the provider kinds with a built-in catalog, sorted.
func Kinds() []string {
	kinds := make([]string, 0, len(builtIn))
	for k := range builtIn {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}
