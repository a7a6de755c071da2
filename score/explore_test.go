package score

import (
	"os"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/sizing"
	"github.com/hanzoai/visor-fleet/types"
)

func TestExplore(t *testing.T) {
	if os.Getenv("VISOR_SCORE_EXPLORE") == "" {
		t.Skip("set VISOR_SCORE_EXPLORE=1")
	}
	full, err := ReadAlibabaFile("../traces/alibaba-gpu2023-openb-pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	day, err := CompressAlibaba(full)
	if err != nil {
		t.Fatal(err)
	}
	aws, _ := sizing.CatalogFor("aws")
	sim, _ := sizing.CatalogFor("sim")
	p := types.DefaultPolicy()
	p.MaxNodes = 1000
	for _, c := range []struct {
		tr  Trace
		cat []types.InstanceType
	}{{day, aws}, {day.CPUOnly(), aws}} {
		start := time.Now()
		cmp, err := Compare(c.tr, c.cat, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cmp.WriteTable(os.Stdout)
		t.Logf("%s in %s", c.tr.Name, time.Since(start))
	}
	for _, tr := range SyntheticTraces(1) {
		start := time.Now()
		cmp, err := Compare(tr, sim, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cmp.WriteTable(os.Stdout)
		t.Logf("%s in %s", tr.Name, time.Since(start))
	}
}
