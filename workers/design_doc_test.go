package workers

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
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

// activityUse is how the workflows run one activity.
type activityUse struct {
	files []string // non-test files of workflows/ that run it, sorted
	local bool     // run with ExecuteLocalActivity
}

// workflowsRun reads workflows/*.go for the registered activities they
// run: the package names an activity method through its variable `a`.
func workflowsRun(t *testing.T, registered map[string]bool) map[string]activityUse {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "workflows", "*.go"))
	require.NoError(t, err)
	ref := regexp.MustCompile(`\ba\.([A-Z][A-Za-z]+)\b`)
	use := map[string]activityUse{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(src), "\n") {
			for _, m := range ref.FindAllStringSubmatch(line, -1) {
				if !registered[m[1]] {
					continue
				}
				u := use[m[1]]
				if base := filepath.Base(f); !contains(u.files, base) {
					u.files = append(u.files, base)
					sort.Strings(u.files)
				}
				u.local = u.local || strings.Contains(line, "ExecuteLocalActivity")
				use[m[1]] = u
			}
		}
	}
	return use
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// docRow is one row of docs/design.md's table of activities: the
// files it says run the activity, and whether it says local.
type docRow struct {
	files []string
	local bool
}

var (
	tableRow   = regexp.MustCompile("^\\| `([A-Za-z]+)` \\|[^|]*\\|([^|]*)\\|$")
	backticked = regexp.MustCompile("`([A-Z][A-Za-z]+)`")
	fileName   = regexp.MustCompile("`([a-z_]+\\.go)`")
	// The way docs name an activity in prose: "`X` activity",
	// "activity (`X`)", "activities (`X`, `Y`)".
	namedActivity = regexp.MustCompile("`([A-Z][A-Za-z]+)` activit|activit(?:y|ies) \\(((?:`[A-Z][A-Za-z]+`(?:, )?)+)")
)

// activityTable reads the rows under "### Activities" up to the next
// heading, and returns the document with the table cut out.
func activityTable(doc string) (map[string]docRow, string, error) {
	rows := map[string]docRow{}
	var rest []string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			in = line == "### Activities"
		}
		if !in {
			rest = append(rest, line)
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			rest = append(rest, line)
			continue
		}
		if _, dup := rows[m[1]]; dup {
			return nil, "", fmt.Errorf("activity %s has two rows", m[1])
		}
		var r docRow
		for _, f := range fileName.FindAllStringSubmatch(m[2], -1) {
			r.files = append(r.files, f[1])
		}
		sort.Strings(r.files)
		r.local = strings.Contains(m[2], "(local)")
		rows[m[1]] = r
	}
	if len(rows) == 0 {
		return nil, "", fmt.Errorf(`no table of activities under "### Activities"`)
	}
	return rows, strings.Join(rest, "\n"), nil
}

// tableProblems compares the table with what the worker registers and
// the workflows run.
func tableProblems(rows map[string]docRow, registered map[string]bool, run map[string]activityUse) []string {
	var out []string
	for name, r := range rows {
		if !registered[name] {
			out = append(out, fmt.Sprintf("the table names activity %s, which no worker registers", name))
			continue
		}
		u := run[name]
		if !reflect.DeepEqual(r.files, u.files) && len(r.files)+len(u.files) > 0 {
			out = append(out, fmt.Sprintf("the table says %s is run from %v; workflows/ runs it from %v", name, r.files, u.files))
		}
		if r.local != u.local {
			out = append(out, fmt.Sprintf("the table says %s is local: %v; workflows/ runs it as a local activity: %v", name, r.local, u.local))
		}
	}
	for name := range registered {
		if _, ok := rows[name]; !ok {
			out = append(out, fmt.Sprintf("activity %s is registered but has no row in the table", name))
		}
	}
	sort.Strings(out)
	return out
}

// namedActivities are the names text writes as activities.
func namedActivities(text string) []string {
	var named []string
	for _, m := range namedActivity.FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			named = append(named, m[1])
		}
		for _, b := range backticked.FindAllStringSubmatch(m[2], -1) {
			named = append(named, b[1])
		}
	}
	return named
}

// proseProblems checks one document's text outside the table: a name
// written as an activity must have a row, and a registered activity no
// workflow runs is named only in the table.
func proseProblems(file, text string, rows map[string]docRow, run map[string]activityUse) []string {
	text = strings.Join(strings.Fields(text), " ") // a name may wrap a line
	var out []string
	for _, name := range namedActivities(text) {
		if _, ok := rows[name]; !ok {
			out = append(out, fmt.Sprintf("%s names activity %s, which is not in docs/design.md's table of activities (no worker registers it)", file, name))
		}
	}
	for _, m := range backticked.FindAllStringSubmatch(text, -1) {
		if _, ok := rows[m[1]]; ok && len(run[m[1]].files) == 0 {
			out = append(out, fmt.Sprintf("%s names activity %s, which no workflow runs", file, m[1]))
		}
	}
	return out
}

func readDocs(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	require.NoError(t, err)
	docs := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		docs["docs/"+filepath.Base(f)] = string(b)
	}
	require.Contains(t, docs, "docs/design.md")
	return docs
}

// docs/design.md's table of activities lists exactly what a worker
// registers, each with the files of workflows/ that run it: an activity
// added, retired or moved to another file cannot leave the table behind.
func TestDesignActivityTable(t *testing.T) {
	registered := registeredActivities(t)
	rows, _, err := activityTable(readDocs(t)["docs/design.md"])
	require.NoError(t, err)
	require.Empty(t, tableProblems(rows, registered, workflowsRun(t, registered)))
}

// Every docs/*.md names as an activity only one in the table, and names a
// registered activity no workflow runs only in the table.
func TestDocsNameActivitiesThatExist(t *testing.T) {
	registered := registeredActivities(t)
	run := workflowsRun(t, registered)
	docs := readDocs(t)
	rows, design, err := activityTable(docs["docs/design.md"])
	require.NoError(t, err)
	docs["docs/design.md"] = design
	var problems []string
	for file, text := range docs {
		problems = append(problems, proseProblems(file, text, rows, run)...)
	}
	sort.Strings(problems)
	require.Empty(t, problems)
	prose := strings.Join(strings.Fields(design), " ")
	require.Subset(t, namedActivities(prose), []string{"Resync", "WatchCluster", "FanOutGate"}, "the design's prose names were not found")
}

// The checks fail on what they are there to catch: a name that is no
// activity, one no workflow runs, a row missing or a file wrong.
func TestActivityDocChecksCatchStaleNames(t *testing.T) {
	registered := registeredActivities(t)
	run := workflowsRun(t, registered)
	rows, _, err := activityTable(readDocs(t)["docs/design.md"])
	require.NoError(t, err)

	require.Len(t, proseProblems("x.md", "it runs the `ObserveFleet` activity", rows, run), 1)
	require.Len(t, proseProblems("x.md", "two activities (`Resync`, `ScaleFleet`)", rows, run), 1)
	require.Len(t, proseProblems("x.md", "the `ObservePool` activity", rows, run), 1, "ObservePool is registered, but no workflow runs it")

	bogus := map[string]docRow{}
	for k, v := range rows {
		bogus[k] = v
	}
	bogus["ObserveFleet"] = docRow{files: []string{"pool_actions.go"}}
	require.Contains(t, tableProblems(bogus, registered, run), "the table names activity ObserveFleet, which no worker registers")

	delete(bogus, "ObserveFleet")
	delete(bogus, "Resync")
	require.Contains(t, tableProblems(bogus, registered, run), "activity Resync is registered but has no row in the table")

	bogus["Resync"] = docRow{files: []string{"pool_workflow.go"}}
	require.Len(t, tableProblems(bogus, registered, run), 1)
}
