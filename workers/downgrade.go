package workers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/hanzoai/visor-fleet/internal/release"
	"github.com/hanzoai/visor-fleet/workflows"
)

// identityTag marks a worker identity with the release it runs: every
// WorkflowTaskCompleted event carries the identity of the worker that
// completed it, so a history names the releases that wrote it.
const identityTag = "visor/"

// Identity is the worker identity this binary uses: the SDK's default
// (process and host) and the release.
func Identity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s@%s%s", os.Getpid(), host, identityTag, release.Current().Release)
}

// releaseInIdentity reads the release back from a worker identity, or "".
func releaseInIdentity(identity string) string {
	i := strings.LastIndex(identity, identityTag)
	if i < 0 {
		return ""
	}
	return identity[i+len(identityTag):]
}

// changeVersionAttr is the search attribute the Go SDK keeps on every run
// that recorded a GetVersion marker: "<change ID>-<version>" for each.
const changeVersionAttr = "TemporalChangeVersion"

// Refusal is one open workflow this binary must not run: its history
// recorded a change ID the binary does not know, or a version above the
// one it records.
type Refusal struct {
	WorkflowID string
	// Change is the "<change ID>-<version>" the binary cannot replay;
	// Why says what about it.
	Change, Why string
	// WrittenBy is the release of the last worker that completed a task
	// of it, "" when that worker did not say (before v0.3.0).
	WrittenBy string
}

// DowngradeError refuses to start a worker of release Mine on a namespace
// whose open workflows were written by a newer release. A worker that
// replayed them would fail their workflow tasks over and over (a marker
// above its maxSupported panics in GetVersion; a change ID it does not
// know takes the old branch until the commands differ), so it starts
// none: nothing is changed, and the newer release can take over again.
type DowngradeError struct {
	Mine     string
	Refusals []Refusal
}

func (e *DowngradeError) Error() string {
	newest := ""
	for _, r := range e.Refusals {
		if r.WrittenBy != "" && release.Compare(r.WrittenBy, newest) > 0 {
			newest = r.WrittenBy
		}
	}
	by, run := "a newer release", "the newer release"
	if newest != "" {
		by, run = "release "+newest, newest+" or newer"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "downgrade refused: %d running workflow(s) were written by %s, and this binary is release %s, which cannot replay them; the worker was not started and nothing was changed (run %s):",
		len(e.Refusals), by, e.Mine, run)
	const shown = 10
	for i, r := range e.Refusals {
		if i == shown {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Refusals)-shown)
			break
		}
		w := r.WrittenBy
		if w == "" {
			w = "a newer release"
		}
		fmt.Fprintf(&b, "\n  %s: written by %s; %s %s", r.WorkflowID, w, r.Change, r.Why)
	}
	return b.String()
}

// ErrDowngradeUnchecked: the caller's credential may not list the whole
// namespace (a tenant's worker), so the check could not run; the caller
// warns and starts the worker unchecked, since refusing would keep a
// tenant's worker from ever starting.
var ErrDowngradeUnchecked = errors.New("downgrade check skipped: this credential may not list the namespace's running workflows")

// CheckDowngrade lists the namespace's running workflows and returns a
// *DowngradeError naming those whose recorded change versions known (this
// binary's workflows.Changes) cannot replay, or nil. It reads visibility,
// which trails the histories by moments: a check, not a lock.
func CheckDowngrade(ctx context.Context, c client.Client, namespace string, known []workflows.Change) error {
	max := make(map[string]int, len(known))
	for _, k := range known {
		max[k.ID] = k.Max
	}
	var refusals []Refusal
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, Query: "ExecutionStatus = 'Running'", PageSize: 1000, NextPageToken: token,
		})
		var denied *serviceerror.PermissionDenied
		if errors.As(err, &denied) {
			return fmt.Errorf("%w: %v", ErrDowngradeUnchecked, err)
		}
		if err != nil {
			return fmt.Errorf("downgrade check: list running workflows: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			p := ex.GetSearchAttributes().GetIndexedFields()[changeVersionAttr]
			if p == nil {
				continue
			}
			var versions []string
			if err := converter.GetDefaultDataConverter().FromPayload(p, &versions); err != nil {
				var one string
				if converter.GetDefaultDataConverter().FromPayload(p, &one) != nil {
					return fmt.Errorf("downgrade check: %s: %s: %w", ex.GetExecution().GetWorkflowId(), changeVersionAttr, err)
				}
				versions = []string{one}
			}
			sort.Strings(versions)
			for _, cv := range versions {
				id, v, ok := splitChangeVersion(cv)
				if !ok {
					continue
				}
				m, knownID := max[id]
				var why string
				switch {
				case !knownID:
					why = "is a change ID this binary does not know"
				case v > m:
					why = fmt.Sprintf("is above version %d, the highest this binary records", m)
				default:
					continue
				}
				refusals = append(refusals, Refusal{WorkflowID: ex.GetExecution().GetWorkflowId(), Change: cv, Why: why,
					WrittenBy: lastWriter(ctx, c, namespace, ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId())})
				break
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if len(refusals) == 0 {
		return nil
	}
	sort.Slice(refusals, func(i, j int) bool { return refusals[i].WorkflowID < refusals[j].WorkflowID })
	return &DowngradeError{Mine: release.Current().Release, Refusals: refusals}
}

// splitChangeVersion splits "<change ID>-<version>" at its last dash.
func splitChangeVersion(s string) (string, int, bool) {
	i := strings.LastIndex(s, "-")
	if i <= 0 {
		return "", 0, false
	}
	v, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return "", 0, false
	}
	return s[:i], v, true
}

// lastWriter is the release in the identity of the newest completed
// workflow task of a run, "" if none says.
func lastWriter(ctx context.Context, c client.Client, namespace, workflowID, runID string) string {
	var token []byte
	for page := 0; page < 5; page++ {
		resp, err := c.WorkflowService().GetWorkflowExecutionHistoryReverse(ctx, &workflowservice.GetWorkflowExecutionHistoryReverseRequest{
			Namespace: namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID}, MaximumPageSize: 100, NextPageToken: token,
		})
		if err != nil {
			return ""
		}
		for _, e := range resp.GetHistory().GetEvents() {
			if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
				return releaseInIdentity(e.GetWorkflowTaskCompletedEventAttributes().GetIdentity())
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ""
		}
	}
	return ""
}
