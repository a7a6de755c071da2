package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// settleLimits bound the final run's wait for the pools to come to rest.
type settleLimits struct {
	// min is always waited: long enough for the pools' provision and
	// unready timeouts to expire, so what the faults left is repaired.
	min, max, interval time.Duration
}

// settled is the last reading of the settle loop: pools and provider read
// together, on two polls in a row that agreed.
type settled struct {
	Pools   poolsReading
	Sims    map[string]simTruth
	Settled bool
	Took    time.Duration
	Polls   int
	// Unrest says why the last poll was not at rest, when it was not.
	Unrest string
}

// settle polls until, after limits.min, two polls in a row find every pool
// answering, with no activity in flight, its target equal to the
// provider's and nothing changed in between; or until limits.max.
func settle(ctx context.Context, c client.Client, dataDir string, spec starter.SpecFile, limits settleLimits, logf func(string, ...any)) (settled, error) {
	began := time.Now()
	keys, clusters := poolKeys(spec), clusterIDs(spec)
	var out settled
	prev := ""
	for {
		out.Polls++
		out.Pools = readPools(ctx, c, keys, clusters)
		sims, err := readSimTruth(dataDir, clusters)
		if err != nil {
			return out, err
		}
		out.Sims = sims
		out.Took = time.Since(began)
		sig, unrest := restSignature(spec, out.Pools, sims)
		out.Unrest = unrest
		if unrest == "" && sig == prev && out.Took >= limits.min {
			out.Settled = true
			return out, nil
		}
		prev = ""
		if unrest == "" {
			prev = sig
		}
		if out.Took >= limits.max {
			logf("pools not at rest after %s: %s", out.Took.Round(time.Second), unrest)
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(limits.interval):
		}
	}
}

// restSignature summarises what must not change between two polls at
// rest, or says why the pools are not at rest.
func restSignature(spec starter.SpecFile, pools poolsReading, sims map[string]simTruth) (sig, unrest string) {
	t := truth{Spec: spec, Sims: sims, Pools: pools}
	var b strings.Builder
	var why []string
	for _, p := range spec.Pools {
		id := p.Key.WorkflowID()
		st := pools.Status[id].Status
		if st == nil {
			why = append(why, id+": no status")
			continue
		}
		if n := len(pools.Open[id].Activities); n > 0 {
			why = append(why, fmt.Sprintf("%s: %d activities in flight", id, n))
		}
		provider := 0
		for _, g := range t.poolGroups(p.Key) {
			provider += g.TargetSize
			fmt.Fprintf(&b, "%s=%d/%d;", g.ID, g.TargetSize, len(g.Instances))
		}
		if provider != st.TargetNodes {
			why = append(why, fmt.Sprintf("%s: target %d, provider %d", id, st.TargetNodes, provider))
		}
		fmt.Fprintf(&b, "%s seq %d target %d;", id, st.Seq, st.TargetNodes)
	}
	return b.String(), strings.Join(why, "; ")
}

func poolKeys(spec starter.SpecFile) []types.PoolKey {
	out := make([]types.PoolKey, 0, len(spec.Pools))
	for _, p := range spec.Pools {
		out = append(out, p.Key)
	}
	return out
}

func clusterIDs(spec starter.SpecFile) []string {
	var out []string
	for _, c := range spec.Clusters {
		if c.Provider == "sim" {
			out = append(out, c.ID)
		}
	}
	return out
}
