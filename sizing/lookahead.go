package sizing

import (
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// lookAhead plans for req.Pending, choosing the size with req.Expected
// (Request.Expected): when the plan for Pending and Expected together
// grows another size than the plan for Pending alone, Pending is planned
// on that size only, and that plan is kept if it leaves out exactly the
// pods the plan for Pending alone leaves out. Otherwise, or without
// Expected, it is the plan for Pending alone.
func lookAhead(req Request, excluded []string) Plan {
	expected := req.Expected
	req.Expected = nil
	now := plan(req, excluded)
	if len(expected) == 0 || now.NewNodes == 0 {
		return now
	}
	ahead := req
	ahead.Pending = append(slices.Clip(req.Pending), expected...)
	ahead.MaxNewNodes = 0
	want := plan(ahead, excluded).Size
	if want == "" || want == now.Size {
		return now
	}
	if a, b := catalogSize(req.Catalog, want), catalogSize(req.Catalog, now.Size); a == nil || b == nil || b.GPUs > 0 || a.MilliCPU >= b.MilliCPU || sameRate(*a, *b) {
		// At the same rate per unit the larger size saves nothing the
		// expected pods would need; FewerNodes already weighs that.
		return now
	}
	only := req
	only.Catalog = nil
	for _, t := range req.Catalog {
		if t.Name == want {
			only.Catalog = append(only.Catalog, t)
		}
	}
	on := plan(only, excluded)
	if on.NewNodes == 0 || !sameUnplaced(on.Unplaceable, now.Unplaceable) {
		return now
	}
	// The alternatives stay the whole catalog's, the chosen size first.
	alts := slices.Clone(now.Alternatives)
	for i, a := range alts {
		if a.Size == want {
			a.NewNodes, a.HourlyCost = on.NewNodes, on.HourlyCost
			copy(alts[1:i+1], alts[:i])
			alts[0] = a
			break
		}
	}
	on.Alternatives = alts
	// The same pods are left out, and why is the whole catalog's to say
	// (on a catalog of one size every pod it cannot hold would be no-fit).
	on.Unplaceable = now.Unplaceable
	return on
}

// sameUnplaced says whether two plans leave out the same pods, as many of each.
func sameUnplaced(a, b []Unplaceable) bool {
	count := func(us []Unplaceable) map[string]int {
		m := map[string]int{}
		for _, u := range us {
			m[u.Pod] += max(u.Count, 1)
		}
		return m
	}
	ca, cb := count(a), count(b)
	if len(ca) != len(cb) {
		return false
	}
	for k, v := range ca {
		if cb[k] != v {
			return false
		}
	}
	return true
}

// catalogSize is the catalog entry named name, nil if none.
func catalogSize(catalog []types.InstanceType, name string) *types.InstanceType {
	for i := range catalog {
		if catalog[i].Name == name {
			return &catalog[i]
		}
	}
	return nil
}
