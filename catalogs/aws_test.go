package catalogs

import (
	"testing"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

func TestAWSFamiliesAndEKSOverhead(t *testing.T) {
	catalog := AWS()
	if err := sizing.CheckCatalog(catalog); err != nil {
		t.Fatal(err)
	}
	gpus, families := 0, map[string]bool{}
	for _, it := range catalog {
		families[it.Family] = true
		if it.GPUs > 0 {
			gpus++
		}
	}
	for _, f := range []string{"m6i", "c6i", "r6i", "g5", "p4d"} {
		if !families[f] {
			t.Errorf("AWS catalog lacks %s", f)
		}
	}
	if gpus < 3 {
		t.Errorf("AWS catalog has %d GPU types", gpus)
	}
	// The EKS AMI reserves memory from max pods: 11Mi each plus 255Mi.
	m6i := catalog[0]
	if want := 11*29*types.MiB + 255*types.MiB + sizing.EvictionHard + eksDaemons.Memory; m6i.Name != "m6i.large" || m6i.Overhead.Memory != want {
		t.Errorf("%s memory overhead %d, want %d", m6i.Name, m6i.Overhead.Memory, want)
	}
}
