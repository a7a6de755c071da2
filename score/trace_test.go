package score

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

const openbHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

func TestReadAlibabaRealTrace(t *testing.T) {
	tr, err := ReadAlibabaFile("../traces/alibaba-gpu2023-openb-pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	// Figures from traces/alibaba-gpu2023-openb-pods.md.
	if len(tr.Pods) != 8152 {
		t.Errorf("%d pods, want 8152", len(tr.Pods))
	}
	cpu := tr.CPUOnly()
	if len(cpu.Pods) != 1088 {
		t.Errorf("%d pods without GPUs, want 1088", len(cpu.Pods))
	}
	p := tr.Pods[0]
	if p.Name != "openb-pod-0000" || p.Requests.MilliCPU != 12000 || p.Requests.Memory != 16384*types.MiB || p.Requests.GPUs != 1 {
		t.Errorf("first pod = %+v", p)
	}
	day, err := CompressAlibaba(tr)
	if err != nil {
		t.Fatal(err)
	}
	if day.Span() > 24*time.Hour || len(day.Pods) < 8000 {
		t.Errorf("compressed day spans %s with %d pods", day.Span(), len(day.Pods))
	}
}

func TestReadAlibabaErrorsNameLineAndColumn(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"name,cpu\n", "wrong number of fields"},
		{strings.Replace(openbHeader, "cpu_milli", "cpu", 1), `"cpu", want "cpu_milli"`},
		{openbHeader + "p,1000,10,0,0,,LS,Running,0,10,0\np2,abc,10,0,0,,LS,Running,0,10,0\n", `line 3: column cpu_milli: "abc" invalid syntax`},
		{openbHeader + "p,1000,-10,0,0,,LS,Running,0,10,0\n", `line 2: column memory_mib: "-10" is negative`},
		{openbHeader + "p,1000,10,0,0,,LS,Running,0,10,0\np,1000,10,0,0,,LS,Running,0,10,0\n", `name "p" repeats`},
	} {
		_, err := ReadAlibaba(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestWriteAlibabaRoundTrips(t *testing.T) {
	tr := Step(2*time.Hour, []float64{2, 8}, 20*time.Minute, 3)
	var b bytes.Buffer
	if err := WriteAlibaba(&b, tr); err != nil {
		t.Fatal(err)
	}
	back, err := ReadAlibaba(&b)
	if err != nil {
		t.Fatal(err)
	}
	back.Name = tr.Name
	if back.Fingerprint() != tr.Fingerprint() {
		t.Errorf("round trip changed the trace: %d pods back of %d", len(back.Pods), len(tr.Pods))
	}
}

func TestSyntheticTracesAreDeterministicAndShaped(t *testing.T) {
	a, b := SyntheticTraces(1), SyntheticTraces(1)
	for i := range a {
		if a[i].Fingerprint() != b[i].Fingerprint() {
			t.Errorf("%s differs between two calls with one seed", a[i].Name)
		}
		if err := a[i].Validate(); err != nil {
			t.Error(err)
		}
	}
	// Diurnal: more arrivals around noon than around midnight.
	var night, noon int
	for _, p := range a[0].Pods {
		switch h := p.Arrive.Hours(); {
		case h < 2 || h >= 22:
			night++
		case h >= 10 && h < 14:
			noon++
		}
	}
	if noon < 3*night {
		t.Errorf("diurnal: %d arrivals around noon, %d around midnight", noon, night)
	}
}

func TestCompressKeepsLifetimes(t *testing.T) {
	tr := Trace{Name: "t", Pods: []Pod{{Name: "a", Arrive: 100 * time.Second, Depart: 160 * time.Second}, {Name: "b", Arrive: 1000 * time.Second, Depart: 1010 * time.Second}}}
	c, err := tr.Compress(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pods[0].Arrive != 10*time.Second || c.Pods[0].Lifetime() != 60*time.Second || c.Pods[1].Arrive != 100*time.Second {
		t.Errorf("compressed = %+v", c.Pods)
	}
	if _, err := tr.Compress(0.5, 0); err == nil {
		t.Error("a factor below 1 was accepted")
	}
}
