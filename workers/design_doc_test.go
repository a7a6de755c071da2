package workers

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/activities"
)

// recordingRegistry keeps what Register registers.
type recordingRegistry struct {
	worker.Registry
	activities []any
}

func (r *recordingRegistry) RegisterWorkflowWithOptions(any, workflow.RegisterOptions) {}
func (r *recordingRegistry) RegisterActivity(a any)                                    { r.activities = append(r.activities, a) }

// registeredActivities are the activity names Register puts on a worker:
// a registered struct's exported methods, as the SDK names them.
func registeredActivities(t *testing.T) map[string]bool {
	t.Helper()
	var r recordingRegistry
	Register(&r, &activities.Activities{})
	names := map[string]bool{}
	for _, a := range r.activities {
		typ := reflect.TypeOf(a)
		require.Equal(t, reflect.Struct, typ.Elem().Kind(), "Register registers the activities struct")
		for i := range typ.NumMethod() {
			names[typ.Method(i).Name] = true
		}
	}
	require.NotEmpty(t, names)
	return names
}

// The activities the design names beside the word: "`X` activity",
// "activity (`X`)", "activities (`X`, `Y`)".
var (
	namedActivity = regexp.MustCompile("`([A-Z][A-Za-z]+)` activit|activit(?:y|ies) \\(((?:`[A-Z][A-Za-z]+`(?:, )?)+)")
	backticked    = regexp.MustCompile("`([A-Z][A-Za-z]+)`")
	workflowRuns  = regexp.MustCompile(`\ba\.([A-Z][A-Za-z]+)\b`)
)

// docs/design.md names only activities a worker registers, and of the
// registered activities it names only those a workflow runs: a renamed or
// retired activity cannot linger in the design.
func TestDesignNamesActivitiesThatExist(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "design.md"))
	require.NoError(t, err)
	text := strings.Join(strings.Fields(string(doc)), " ") // a name may wrap a line

	registered := registeredActivities(t)
	run := map[string]bool{}
	files, err := filepath.Glob(filepath.Join("..", "workflows", "*.go"))
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range workflowRuns.FindAllStringSubmatch(string(src), -1) {
			run[m[1]] = true
		}
	}

	var named []string
	for _, m := range namedActivity.FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			named = append(named, m[1])
		}
		for _, b := range backticked.FindAllStringSubmatch(m[2], -1) {
			named = append(named, b[1])
		}
	}
	require.Subset(t, named, []string{"Resync", "WatchCluster", "FanOutGate"}, "the design's activity lists were not found")
	for _, name := range named {
		require.True(t, registered[name], "docs/design.md names activity %s, which no worker registers", name)
	}
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if name := m[1]; registered[name] {
			require.True(t, run[name], "docs/design.md names activity %s, which no workflow runs", name)
		}
	}
}
