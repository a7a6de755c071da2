package contract_test

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
	"github.com/hanzoai/visor-fleet/workflows"
)

// The client's start inputs must reach the worker as its own inputs would:
// same payload bytes, and the same fields apart from the carried state.

func fullSpec() contract.PoolSpec {
	p := types.DefaultPolicy()
	p.AllowedSizes = []string{"s-2vcpu-4gb", "s-4vcpu-8gb"}
	p.StaleAfter = types.Duration(3 * time.Minute)
	p.ProvisionTimeout = types.Duration(7 * time.Minute)
	p.MaxUnreadyFraction = 0.3
	p.NodeLabels = map[string]string{"tier": "web"}
	p.NodeTaints = []types.Taint{{Key: "gpu", Value: "a100", Effect: "NoSchedule"}}
	p.MaxNodesWithoutProgress = 4
	return contract.PoolSpec{
		Key:               types.PoolKey{Org: "acme", Project: "store", Service: "api", Provider: "aws", Cluster: "east-1"},
		Policy:            p,
		ProviderTaskQueue: "tenant-acme",
		Placement:         contract.Placement{Regions: []string{"us-east-1"}, Residency: "us", Capabilities: []string{"mig"}},
		PriceOverrides:    map[string]float64{"m5.large": 0.08},
	}
}

func payloadBytes(t *testing.T, v any) []byte {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Concat(p.Metadata["encoding"], []byte("\n"), p.Data)
}

func TestPoolStartEncodesAsWorkerInput(t *testing.T) {
	spec := fullSpec()
	client := payloadBytes(t, contract.PoolStart{Spec: spec})
	worker := payloadBytes(t, workflows.PoolInput{Spec: spec})
	if !bytes.Equal(client, worker) {
		t.Fatalf("encodings differ:\nclient %s\nworker %s", client, worker)
	}
	p, _ := converter.GetDefaultDataConverter().ToPayload(contract.PoolStart{Spec: spec})
	var got workflows.PoolInput
	if err := converter.GetDefaultDataConverter().FromPayload(p, &got); err != nil {
		t.Fatal(err)
	}
	if got.State != nil || !reflect.DeepEqual(got.Spec, spec) {
		t.Fatalf("worker decoded %+v, want the spec and no state", got)
	}
	sameFieldsBut(t, reflect.TypeFor[contract.PoolStart](), reflect.TypeFor[workflows.PoolInput](), "State")
}

func TestClusterStartEncodesAsWorkerInput(t *testing.T) {
	d := contract.ClusterDeclared{
		ID: "east-1", Phase: contract.PhaseActive, Region: "us-east-1", Zone: "us-east-1a", Residency: "us",
		MetricsLabel: "east", Provider: "aws", Owner: "ops",
		SampleInterval: types.Duration(30 * time.Second), StaleAfter: types.Duration(2 * time.Minute),
	}
	for _, start := range []contract.ClusterStart{
		{Declared: d, TokenHash: "ab12", ReportKey: "key"},
		{Declared: d}, // no token: the omitted fields must be omitted on both sides
	} {
		worker := workflows.ClusterInput{Declared: start.Declared, TokenHash: start.TokenHash, ReportKey: start.ReportKey}
		if c, w := payloadBytes(t, start), payloadBytes(t, worker); !bytes.Equal(c, w) {
			t.Fatalf("encodings differ:\nclient %s\nworker %s", c, w)
		}
	}
	sameFieldsBut(t, reflect.TypeFor[contract.ClusterStart](), reflect.TypeFor[workflows.ClusterInput](), "State")
}

func TestMemoClusterDeclaredIsTheWorkflowsKey(t *testing.T) {
	if contract.MemoClusterDeclared != workflows.ClusterMemoDeclared {
		t.Fatalf("contract says memo key %q, the cluster workflow writes %q", contract.MemoClusterDeclared, workflows.ClusterMemoDeclared)
	}
}

// sameFieldsBut fails unless worker has exactly client's fields (name, type,
// tag) plus the named carried-state field: a field added to the worker's
// input must be added to the client's too, or left out here on purpose.
func sameFieldsBut(t *testing.T, client, worker reflect.Type, carried string) {
	t.Helper()
	want := map[string]reflect.StructField{}
	for i := range client.NumField() {
		f := client.Field(i)
		want[f.Name] = f
	}
	for i := range worker.NumField() {
		f := worker.Field(i)
		if f.Name == carried {
			continue
		}
		c, ok := want[f.Name]
		if !ok {
			t.Errorf("%s.%s has no counterpart in %s", worker, f.Name, client)
			continue
		}
		if c.Type != f.Type || c.Tag != f.Tag {
			t.Errorf("%s.%s is %s `%s`, %s has %s `%s`", worker, f.Name, f.Type, f.Tag, client, c.Type, c.Tag)
		}
		delete(want, f.Name)
	}
	for name := range want {
		t.Errorf("%s.%s is not in %s", client, name, worker)
	}
}
