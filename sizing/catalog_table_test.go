package sizing

import (
	"strings"
	"testing"
)

func TestCatalogTableReadsRowsAndRefusesBadOnes(t *testing.T) {
	rows, err := ParseCatalogTable("# a comment\nname,family,vcpu,memory_gib,gpus,gpu_model,max_pods,hourly\n\nx.large,x,2,8,1,T4,110,0.096\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := Row("x.large", "x", 2, 8*1024, 1, "T4", 110, 0.096); len(rows) != 1 || rows[0] != want {
		t.Fatalf("rows = %+v, want [%+v]", rows, want)
	}
	for table, want := range map[string]string{
		"name,family\n": "wrong number of fields",
		"name,family,vcpu,memory,gpus,gpu_model,max_pods,hourly\n":                          "the first line must be",
		"name,family,vcpu,memory_gib,gpus,gpu_model,max_pods,hourly\nx,x,2,8GiB,0,,110,1\n": "memory_gib",
		"name,family,vcpu,memory_gib,gpus,gpu_model,max_pods,hourly\nx,x,2,8,0,,110,$1\n":   "hourly",
	} {
		if _, err := ParseCatalogTable(table); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCatalogTable(%q) = %v, want an error with %q", table, err, want)
		}
	}
}
