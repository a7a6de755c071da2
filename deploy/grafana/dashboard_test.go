package grafana

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

const dashboardFile = "visor-fleet.json"

// chartCopy is the copy the Helm chart provisions (a chart reads only
// files inside it).
const chartCopy = "../helm/visor-fleet/dashboards/visor-fleet.json"

// The shipped JSON is what Build makes (VISOR_UPDATE_DASHBOARD=1 rewrites it).
func TestShippedDashboardIsTheBuiltOne(t *testing.T) {
	built, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{dashboardFile, chartCopy} {
		if os.Getenv("VISOR_UPDATE_DASHBOARD") == "1" {
			if err := os.WriteFile(file, built, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		shipped, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shipped, built) {
			t.Fatalf("%s differs from Build(): run VISOR_UPDATE_DASHBOARD=1 go test ./deploy/grafana/", file)
		}
	}
}

// The shipped JSON decodes strictly into Grafana's dashboard schema (the
// foundation SDK's types are generated from Grafana's own schema: an
// unknown or ill-typed field is an error) and passes its validation.
func TestShippedDashboardLoadsInGrafanasSchema(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard.Dashboard
	if err := strictDecode(&d, raw); err != nil {
		t.Fatalf("%s does not fit Grafana's dashboard schema: %v", dashboardFile, err)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.Uid == nil || *d.Uid != UID || len(d.Panels) != len(panels)+len(stats) {
		t.Fatalf("uid %v, %d panels", d.Uid, len(d.Panels))
	}
	// A broken file is refused, so the check above can fail.
	var bad dashboard.Dashboard
	if err := strictDecode(&bad, bytes.Replace(raw, []byte(`"schemaVersion"`), []byte(`"schemaVersoin"`), 1)); err == nil {
		t.Fatal("a misspelt field passed the strict decode")
	}
}

// Every panel shows what the issue asks a platform team to watch.
func TestDashboardCoversTheFleet(t *testing.T) {
	want := []string{"Pools by state", "Nodes vs target", "Pending pods", "Oldest pending pod", "Decisions by outcome",
		"Provider errors by class", "Node-hours metered", "Cost per org"}
	var got []string
	for _, p := range panels {
		got = append(got, p.title)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no panel %q", w)
		}
	}
}

// Metrics lists every metric the dashboard's queries read, sorted; the
// metrics test in cmd/visor checks each is served with its HELP line.
func TestMetricsListsTheQueriedNames(t *testing.T) {
	m := Metrics()
	if !slices.IsSorted(m) || !slices.Contains(m, "visor_pool_state") || !slices.Contains(m, "visor_provider_errors_total") {
		t.Fatalf("Metrics() = %v", m)
	}
}

// strictDecode is the SDK's strict decoding, whose generated code returns
// an empty error list as a non-nil error.
func strictDecode(d *dashboard.Dashboard, raw []byte) error {
	err := d.UnmarshalJSONStrict(raw)
	if errs, ok := err.(cog.BuildErrors); ok && len(errs) == 0 {
		return nil
	}
	return err
}
