package cluster

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/types"
)

// FleetShape is what the deployment runs: how many pools on how many sim
// clusters, which share of them bursty, and the tenant org whose pools'
// provider calls go to its own worker.
type FleetShape struct {
	Pools, Clusters int
	// BurstShare of the pools get bursty demand; the others one steady pod.
	BurstShare float64
	TenantOrg  string
	// Idle pools: the production policy (types.DefaultPolicy, no floor),
	// no demand and the default 30 s sample: what a pool costs at rest.
	Idle bool
	// Resync of the failover policy; 0 is 20 s. Every pool resyncing
	// that often is what "decided again" is timed against, and 1,000 pools
	// at 20 s are ~50 resyncs a second, more than 2 cores carry.
	Resync time.Duration
	// WorkerBinary is the visor binary the workers and the CLI start with
	// (a previous release, for the rolling upgrade); empty: the deployment's.
	WorkerBinary string
}

// orgs the pools are spread over; the first is the tenant's.
var orgs = []string{"acme", "globex", "initech", "umbrella"}

// tenantQueue is the tenant's own worker's task queue.
func tenantQueue(org string) string { return contract.TenantQueuePrefix + org }

// failoverPolicy has second-scale thresholds, so a test of minutes sees
// pools scale both ways, and a 20 s resync, so every pool decides at least
// that often: the baseline "every pool decided again" is measured against.
func failoverPolicy(resync time.Duration) types.Policy {
	if resync <= 0 {
		resync = 20 * time.Second
	}
	return types.Policy{
		MinNodes: 1, MaxNodes: 6,
		PendingThreshold:  types.Duration(10 * time.Second),
		IdleWindow:        types.Duration(60 * time.Second),
		ScaleUpCooldown:   types.Duration(10 * time.Second),
		ScaleDownCooldown: types.Duration(30 * time.Second),
		SampleInterval:    types.Duration(5 * time.Second),
		ResyncInterval:    types.Duration(resync),
		DrainTimeout:      types.Duration(30 * time.Second),
		ProvisionTimeout:  types.Duration(90 * time.Second),
		UnreadyTimeout:    types.Duration(90 * time.Second),
	}
}

func (s FleetShape) policy() types.Policy {
	if !s.Idle {
		return failoverPolicy(s.Resync)
	}
	p := types.DefaultPolicy()
	p.MinNodes = 0
	// A burst's pods are bought for 10 s after they turn pending, so the
	// latency measured is the system's more than the threshold's.
	p.PendingThreshold = types.Duration(10 * time.Second)
	return p
}

func (s FleetShape) sampleInterval() time.Duration {
	if s.Idle {
		return types.DefaultPolicy().SampleInterval.D()
	}
	return 5 * time.Second
}

// clusterID is the i-th sim cluster; the last one is the tenant's.
func (s FleetShape) clusterID(i int) string { return fmt.Sprintf("sim-%02d", i) }

func (s FleetShape) tenantCluster() string { return s.clusterID(s.Clusters - 1) }

// spec is the fleet as a spec file: the clusters (enrolled one by one),
// the pools with their demand (`visor pool apply` starts them; the sim host
// runs their demand).
func (s FleetShape) spec() (starter.SpecFile, []byte, error) {
	if s.Pools < 1 || s.Clusters < 2 {
		return starter.SpecFile{}, nil, fmt.Errorf("fleet: need at least 1 pool and 2 clusters (one the tenant's), got %d and %d", s.Pools, s.Clusters)
	}
	var f starter.SpecFile
	for i := range s.Clusters {
		f.Clusters = append(f.Clusters, contract.ClusterDeclared{
			ID: s.clusterID(i), Phase: contract.PhaseActive, Provider: "sim",
			Region: "us-east", SampleInterval: types.Duration(s.sampleInterval()),
		})
	}
	bursty := int(float64(s.Pools)*s.BurstShare + 0.5)
	for i := range s.Pools {
		org := orgs[i%len(orgs)]
		cluster := s.clusterID(i % (s.Clusters - 1))
		queue := ""
		if org == s.TenantOrg {
			cluster, queue = s.tenantCluster(), tenantQueue(org)
		}
		e := starter.PoolEntry{PoolSpec: contract.PoolSpec{
			Key:    types.PoolKey{Org: org, Project: fmt.Sprintf("p%03d", i/len(orgs)%1000), Service: fmt.Sprintf("s%d", i/len(orgs)/1000), Provider: "sim", Cluster: cluster},
			Policy: s.policy(), ProviderTaskQueue: queue,
		}}
		if s.Idle {
			f.Pools = append(f.Pools, e)
			continue
		}
		demo := &starter.DemoDemand{Shape: "steady", Pods: 1, Requests: types.Resources{MilliCPU: 250, Memory: 512 * types.MiB}}
		if i < bursty {
			// Staggered periods, so bursts do not all land together.
			demo = &starter.DemoDemand{
				Shape: "burst", Pods: 1, BurstPods: 4, Period: types.Duration(3*time.Minute + time.Duration(i%7)*10*time.Second),
				BurstFor: types.Duration(60 * time.Second), Requests: types.Resources{MilliCPU: 900, Memory: types.GiB},
			}
		}
		e.Demo = demo
		f.Pools = append(f.Pools, e)
	}
	raw, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return f, nil, err
	}
	parsed, err := starter.ParseSpecFile("generated fleet", raw)
	return parsed, raw, err
}
