package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

// priceDateLayouts are how a catalog may date its prices.
var priceDateLayouts = []string{"2006-01-02", "2006-01"}

// catalogRowsValid: every size is one the planner can use (sizing's own
// check: unique names, positive resources, GPUs with their model), priced
// with the date of the price, with a root disk and an architecture nodes
// report; the spec's size is a row; and each call is a fresh copy.
func catalogRowsValid(t *testing.T, s *subject) {
	catalog, err := s.p.Catalog(s.ctx)
	s.record(catalog, err)
	if err != nil {
		t.Fatalf("Catalog: %v", err)
	}
	if len(catalog) == 0 {
		t.Fatal("the catalog is empty")
	}
	if err := sizing.CheckCatalog(catalog); err != nil {
		t.Errorf("catalog: %v", err)
	}
	for i, it := range catalog {
		if it.HourlyPrice <= 0 {
			t.Errorf("size [%d] %q: hourly price %v", i, it.Name, it.HourlyPrice)
		}
		if !datedLike(it.PriceDate) {
			t.Errorf("size [%d] %q: price date %q is not YYYY-MM or YYYY-MM-DD", i, it.Name, it.PriceDate)
		}
		if it.EphemeralStorage <= 0 {
			t.Errorf("size [%d] %q: no root disk", i, it.Name)
		}
		if a := it.Architecture(); a != "amd64" && a != "arm64" {
			t.Errorf("size [%d] %q: architecture %q", i, it.Name, a)
		}
	}
	if !slices.ContainsFunc(catalog, func(it types.InstanceType) bool { return it.Name == s.Spec.Size }) {
		t.Errorf("the double's spec asks for size %q, which the catalog does not list", s.Spec.Size)
	}
	catalog[0].HourlyPrice = -1
	again, err := s.p.Catalog(s.ctx)
	s.record(again, err)
	if err == nil && len(again) > 0 && again[0].HourlyPrice == -1 {
		t.Error("Catalog shares its backing array between calls: an edit leaked into the next")
	}
}

func datedLike(date string) bool {
	for _, layout := range priceDateLayouts {
		if _, err := time.Parse(layout, date); err == nil {
			return true
		}
	}
	return false
}
