package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/gcp"
	"github.com/hanzoai/visor-fleet/connectors/gcp/fakecompute"
	"github.com/hanzoai/visor-fleet/connectors/kubernetes"
	"github.com/hanzoai/visor-fleet/connectors/lightsail"
	"github.com/hanzoai/visor-fleet/connectors/lightsail/fakelightsail"
	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workers"
)

// machine is a VM a connector's double holds for the pool, as its kubelet
// would register it.
type machine struct {
	name   string
	labels map[string]string
}

// cloud is a connector under test with its double.
type cloud struct {
	provider connectors.Provider
	name     string // the provider kind
	size     string
	catalog  []types.InstanceType
	// machines lists the live VMs the double holds for the pool.
	machines func(types.PoolKey) []machine
}

// scaleUpAndDownOn runs a pool on c through the real pool workflow: the
// connector against its double launches the machines; a simulated
// cluster (the sim's Kubernetes side only) is the cluster, where each VM
// joins as a Ready Node, as its kubelet would, and the sim's demand
// schedules. The pool scales up for 8 pending pods and back to its floor,
// and the double holds as many VMs as the pool reports.
func scaleUpAndDownOn(t *testing.T, c cloud) {
	id := c.name + "-e2e"
	key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: c.name, Cluster: id}
	f, err := sim.New(sim.Config{Cluster: id, Provider: c.name})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go func() { _ = f.Run(ctx, 200*time.Millisecond) }()
	go joinMachines(ctx, t, f, key, c)
	if err := f.AddDemand(key, demand(8)); err != nil {
		t.Fatal(err)
	}
	policy := testsuite.FastPolicy()
	policy.AllowedSizes = []string{c.size}
	sp := starter.SpecFile{
		Clusters: []contract.ClusterDeclared{{ID: id, Provider: c.name, Phase: contract.PhaseActive, Region: "e2e", SampleInterval: types.Duration(time.Second)}},
		Pools:    []starter.PoolEntry{{PoolSpec: contract.PoolSpec{Key: key, Policy: policy}}},
	}
	s := testsuite.StartStackOn(t, sp, "", workers.StaticClusters{id: {
		ID: id, Provider: connectors.Checked(c.provider),
		Observer: kubernetes.NewObserver(f.Clientset(), kubernetes.Config{Cluster: id, Provider: c.name}),
		Drainer:  kubernetes.NewDrainer(f.Clientset(), kubernetes.DrainerConfig{}),
	}})

	up := testsuite.WaitForPool(t, s, key, 120*time.Second, "scaled up on "+c.name+" with none pending", func(st contract.PoolStatus) bool {
		return st.Nodes >= 2 && st.PendingPods == 0 && hasAction(st, "scale-up")
	})
	if got := len(c.machines(key)); got != up.Nodes {
		t.Errorf("the pool reports %d nodes, the double holds %d VMs", up.Nodes, got)
	}
	if err := f.AddDemand(key, demand(0)); err != nil {
		t.Fatal(err)
	}
	testsuite.WaitForPool(t, s, key, 120*time.Second, "scaled down to the floor on "+c.name, func(st contract.PoolStatus) bool {
		return st.Nodes == st.Policy.MinNodes && hasAction(st, "scale-down")
	})
	deadline := time.Now().Add(30 * time.Second)
	for len(c.machines(key)) != policy.MinNodes {
		if time.Now().After(deadline) {
			t.Fatalf("the double holds %d VMs after the scale-down, want %d", len(c.machines(key)), policy.MinNodes)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// joinMachines registers a Ready Node for every VM of the pool and
// deletes the Node of a VM that is gone.
func joinMachines(ctx context.Context, t *testing.T, f *sim.Fleet, key types.PoolKey, c cloud) {
	var size types.InstanceType
	for _, it := range c.catalog {
		if it.Name == c.size {
			size = it
		}
	}
	nodes := f.Clientset().CoreV1().Nodes()
	joined := map[string]bool{}
	for ctx.Err() == nil {
		present := map[string]bool{}
		for _, m := range c.machines(key) {
			present[m.name] = true
			if joined[m.name] {
				continue
			}
			if _, err := nodes.Create(ctx, nodeOf(m, size, key), metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
				t.Errorf("join %s: %v", m.name, err)
			}
			joined[m.name] = true
		}
		for name := range joined {
			if !present[name] {
				if err := nodes.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && ctx.Err() == nil {
					t.Errorf("leave %s: %v", name, err)
				}
				delete(joined, name)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nodeOf is the Ready Node a VM of size registers, with the pool's labels
// and another cloud's provider ID (the sim clears only its own sim:// nodes).
func nodeOf(m machine, size types.InstanceType, key types.PoolKey) *corev1.Node {
	labels := maps.Clone(m.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, key.NodeLabels())
	labels[corev1.LabelInstanceTypeStable] = size.Name
	labels[corev1.LabelHostname] = m.name
	labels[corev1.LabelOSStable] = "linux"
	labels[corev1.LabelArchStable] = size.Architecture()
	list := func(r types.Resources) corev1.ResourceList {
		return corev1.ResourceList{
			corev1.ResourceCPU:              *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI),
			corev1.ResourceMemory:           *resource.NewQuantity(r.Memory, resource.BinarySI),
			corev1.ResourcePods:             *resource.NewQuantity(r.Pods, resource.DecimalSI),
			corev1.ResourceEphemeralStorage: *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI),
		}
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: m.name, Labels: labels, CreationTimestamp: now},
		Spec:       corev1.NodeSpec{ProviderID: key.Provider + "://" + m.name},
		Status: corev1.NodeStatus{
			Capacity: list(size.Capacity()), Allocatable: list(size.Allocatable()), Phase: corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}},
		},
	}
}

func TestPoolOnGCPScalesUpAndDown(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakecompute.New("e2e@visor-e2e.iam.gserviceaccount.com", &key.PublicKey)
	t.Cleanup(srv.Close)
	t.Setenv("VISOR_E2E_GCP_KEY", string(fakecompute.KeyFile("e2e@visor-e2e.iam.gserviceaccount.com", srv.TokenURL(), key)))
	p, err := gcp.NewWith(context.Background(), gcp.Config{
		CommonConfig: connectors.CommonConfig{Credentials: "env:VISOR_E2E_GCP_KEY"},
		Project:      "visor-e2e",
		Zone:         "us-central1-a",
		Endpoint:     srv.Endpoint(),
		Image:        "projects/ubuntu-os-cloud/global/images/family/ubuntu-2404-lts-amd64",
	}, nil, gcp.Options{PollInterval: 20 * time.Millisecond, AttemptWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	scaleUpAndDownOn(t, cloud{provider: p, name: gcp.ProviderName, size: "e2-standard-4", catalog: gcp.Catalog(),
		machines: func(k types.PoolKey) []machine {
			var out []machine
			for name, g := range srv.Groups() {
				if !strings.HasPrefix(name, gcp.GroupPrefix(k.NodePoolLabel())) {
					continue
				}
				for _, in := range g.Instances {
					if in.VM && in.Action != "DELETING" {
						out = append(out, machine{name: in.Name, labels: gcp.LabelsOfDescription(g.Description)})
					}
				}
			}
			return out
		}})
}

func TestPoolOnLightsailScalesUpAndDown(t *testing.T) {
	srv := fakelightsail.New("us-east-1", "AKIAE2ELIGHTSAIL", "e2e-lightsail-secret")
	t.Cleanup(srv.Close)
	t.Setenv("VISOR_E2E_LIGHTSAIL_KEY", "AKIAE2ELIGHTSAIL:e2e-lightsail-secret")
	p, err := lightsail.New(context.Background(), lightsail.Config{
		CommonConfig:     connectors.CommonConfig{Credentials: "env:VISOR_E2E_LIGHTSAIL_KEY"},
		Region:           "us-east-1",
		AvailabilityZone: "us-east-1a",
		BlueprintID:      "ubuntu_24_04",
		Endpoint:         srv.URL,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	scaleUpAndDownOn(t, cloud{provider: p, name: lightsail.ProviderName, size: "xlarge_3_0", catalog: lightsail.Catalog(),
		machines: func(k types.PoolKey) []machine {
			var out []machine
			for _, in := range srv.Instances() {
				if in.Tags[lightsail.TagPool] == k.NodePoolLabel() && in.State != "shutting-down" {
					out = append(out, machine{name: in.Name, labels: connectors.TenantTags(in.Tags, "visor-")})
				}
			}
			return out
		}})
}
