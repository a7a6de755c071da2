package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/internal/devstack"
	"github.com/hanzoai/visor-fleet/starter"
)

// collectHistories reads every run of every workflow in the namespace
// straight from the frontend, with its list entry (memo, search
// attributes), and returns it twice: as the server stores it (protobuf
// bytes and protojson) and with every payload decoded by the stack's codec.
func collectHistories(ctx context.Context, t *testing.T, s *devstack.Stack) (raw, decoded string) {
	t.Helper()
	pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
	must(t, err)
	svc, ns := s.Client.WorkflowService(), s.Server.Namespace()
	var rawB, decB strings.Builder
	add := func(m proto.Message) {
		b, err := proto.Marshal(m)
		must(t, err)
		j, err := protojson.Marshal(m)
		must(t, err)
		rawB.Write(b)
		rawB.Write(j)
		d := proto.Clone(m)
		must(t, proxy.VisitPayloads(ctx, d, proxy.VisitPayloadsOptions{
			Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
				return pc.Decode(p)
			},
		}))
		b, err = proto.Marshal(d)
		must(t, err)
		j, err = protojson.Marshal(d)
		must(t, err)
		decB.Write(b)
		decB.Write(j)
	}
	runs, events := 0, 0
	var next []byte
	for {
		list, err := svc.ListWorkflowExecutions(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: ns, NextPageToken: next})
		must(t, err)
		for _, ex := range list.Executions {
			add(ex)
			runs++
			var page []byte
			for {
				h, err := svc.GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
					Namespace: ns, Execution: ex.Execution, NextPageToken: page,
					HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
				})
				must(t, err)
				for _, e := range h.GetHistory().GetEvents() {
					add(e)
					events++
				}
				if page = h.NextPageToken; len(page) == 0 {
					break
				}
			}
		}
		if next = list.NextPageToken; len(next) == 0 {
			break
		}
	}
	if runs < 2 {
		t.Fatalf("found %d workflow runs; want the pool's and the cluster's at least", runs)
	}
	t.Logf("read %d workflow runs, %d events", runs, events)
	return rawB.String(), decB.String()
}

// waitForClusterReport waits until the cluster's observed half comes from
// the system's watcher again (after a report by hand).
func waitForClusterReport(t *testing.T, s *devstack.Stack, cluster string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cs, err := starter.ClusterStatus(ctx, s.Client, cluster)
		cancel()
		if err == nil && cs.Observed.AgentVersion == activities.WatcherVersion {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster %s: no watcher report accepted with the rotated token: %+v %v", cluster, cs.Observed, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitClosed waits for the workflow's latest run to complete.
func waitClosed(ctx context.Context, t *testing.T, s *devstack.Stack, id string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		d, err := s.Client.DescribeWorkflowExecution(ctx, id, "")
		if err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not complete in %s (last %v, %v)", id, timeout, d.GetWorkflowExecutionInfo().GetStatus(), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
