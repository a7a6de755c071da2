package starter_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/hanzoai/visor-fleet/codec"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/starter"
	"github.com/hanzoai/visor-fleet/testsuite"
	"github.com/hanzoai/visor-fleet/types"
)

// One embedded stack for the cluster contract over the wire: enrollment,
// label uniqueness, signed reports, rotation, phases and placement.
func TestClusterContractOnTheEmbeddedServer(t *testing.T) {
	east := contract.ClusterDeclared{ID: "sim-east", Provider: "sim", Phase: contract.PhaseActive, Region: "us-east",
		Residency: "us-only", MetricsLabel: "prom-east", SampleInterval: types.Duration(time.Second)}
	s := testsuite.StartStack(t, starter.SpecFile{Clusters: []contract.ClusterDeclared{east}}, "")
	c := s.Client
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Visibility lists sim-east (enrolled by the stack) before we rely on it.
	require.Eventually(t, func() bool {
		l, err := starter.ListClusters(ctx, c, false)
		return err == nil && len(l) == 1 && l[0].Declared.MetricsLabel == "prom-east"
	}, 20*time.Second, 100*time.Millisecond)

	var tokens []string
	t.Run("enroll is idempotent and refuses a duplicate metrics label", func(t *testing.T) {
		tok, created, err := starter.EnrollCluster(ctx, c, east, "")
		require.NoError(t, err)
		require.False(t, created)
		require.Empty(t, tok, "a second enrollment minted a token")

		west := contract.ClusterDeclared{ID: "west", Provider: "sim", Region: "eu-central", Residency: "gdpr", MetricsLabel: "prom-east"}
		_, _, err = starter.EnrollCluster(ctx, c, west, "")
		require.ErrorContains(t, err, `metricsLabel "prom-east" is already used by cluster sim-east`)
		_, err = c.DescribeWorkflowExecution(ctx, "cluster/west", "")
		require.Error(t, err, "a refused enrollment started the workflow")

		west.MetricsLabel = "prom-west"
		tok, created, err = starter.EnrollCluster(ctx, c, west, "")
		require.NoError(t, err)
		require.True(t, created)
		require.True(t, strings.HasPrefix(tok, contract.TokenPrefix))
		tokens = append(tokens, tok)
		st, err := starter.ClusterStatus(ctx, c, "west")
		require.NoError(t, err)
		require.Equal(t, contract.PhasePending, st.Declared.Phase, "new clusters start pending")
		// Its tasks go ahead of the pools' in a backed-up queue.
		d, err := c.DescribeWorkflowExecution(ctx, "cluster/west", "")
		require.NoError(t, err)
		require.Equal(t, int32(contract.ClusterPriorityKey), d.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey())
		hash, _, _ := contract.TokenCredentials(tok)
		require.Equal(t, contract.TokenFingerprint(hash), st.TokenFingerprint)
	})

	t.Run("a cluster enrolled before it had a priority gets it when enrolled again", func(t *testing.T) {
		priority := func() int32 {
			d, err := c.DescribeWorkflowExecution(ctx, "cluster/sim-east", "")
			require.NoError(t, err)
			return d.GetWorkflowExecutionInfo().GetPriority().GetPriorityKey()
		}
		ns := s.Server.Namespace()
		// As enrolled before cluster workflows ran ahead of their pools.
		require.NoError(t, starter.SetClusterPriority(ctx, c, ns, "sim-east", 3, "test"))
		require.Equal(t, int32(3), priority())
		_, created, err := starter.EnrollCluster(ctx, c, east, "")
		require.NoError(t, err)
		require.False(t, created)
		raised, err := starter.RaiseClusterPriority(ctx, c, ns, "sim-east", "test")
		require.NoError(t, err)
		require.True(t, raised)
		require.Equal(t, int32(contract.ClusterPriorityKey), priority())
		raised, err = starter.RaiseClusterPriority(ctx, c, ns, "sim-east", "test")
		require.NoError(t, err)
		require.False(t, raised, "a cluster already at its priority was changed again")
		// Its workflow goes on past the options change in its history.
		_, err = starter.ClusterStatus(ctx, c, "sim-east")
		require.NoError(t, err)

		_, err = starter.RaiseClusterPriority(ctx, c, ns, "sim-nowhere", "test")
		require.ErrorContains(t, err, "cluster sim-nowhere: describe cluster/sim-nowhere")
	})

	t.Run("signed reports, wrong tokens and rotation", func(t *testing.T) {
		tok, issued, err := starter.RotateClusterToken(ctx, c, "sim-east", "test needs the token", "test")
		require.NoError(t, err)
		tokens = append(tokens, tok)
		require.Equal(t, "sim-east", issued.Cluster)

		report := contract.ObservedReport{SyncState: contract.SyncConnected, Capabilities: contract.Capabilities{MIG: true, RDMA: true},
			AgentVersion: "agent/2.0.1", Nodes: 4, Pools: 2}
		st, err := starter.ReportObserved(ctx, c, "sim-east", tok, report)
		require.NoError(t, err)
		require.True(t, st.Observed.Capabilities.MIG)
		require.Equal(t, "agent/2.0.1", st.Observed.AgentVersion)

		_, err = starter.ReportObserved(ctx, c, "sim-east", tokens[0], report)
		require.ErrorContains(t, err, "signature does not verify", "west's token spoke for sim-east")
		_, err = starter.ReportObserved(ctx, c, "sim-east", "vfe1.forged", report)
		require.ErrorContains(t, err, "enrollment token is not")

		next, _, err := starter.RotateClusterToken(ctx, c, "sim-east", "rotation drill", "test")
		require.NoError(t, err)
		tokens = append(tokens, next)
		_, err = starter.ReportObserved(ctx, c, "sim-east", tok, report)
		require.ErrorContains(t, err, "signature does not verify", "the rotated-out token still works")
		_, err = starter.ReportObserved(ctx, c, "sim-east", next, report)
		require.NoError(t, err)

		_, _, err = starter.RotateClusterToken(ctx, c, "nowhere", "x", "test")
		require.ErrorContains(t, err, "cluster nowhere is not enrolled")
	})

	t.Run("no token ever enters history", func(t *testing.T) {
		westHash, _, _ := contract.TokenCredentials(tokens[0])
		eastHash, _, _ := contract.TokenCredentials(tokens[2])
		pc, err := codec.NewPayloadCodec(s.Identity.CodecKeys)
		require.NoError(t, err)
		for id, hash := range map[string]string{"cluster/west": westHash, "cluster/sim-east": eastHash} {
			raw := historyBytes(t, ctx, c, id, nil)
			decoded := historyBytes(t, ctx, c, id, pc)
			// The control: decoded payloads are searchable, the hash is
			// there; encrypted at rest, it is not.
			require.True(t, bytes.Contains(decoded, []byte(hash)), "%s's decoded history does not hold its token hash", id)
			require.False(t, bytes.Contains(raw, []byte(hash)), "%s's raw history holds its token hash in plaintext", id)
			for _, tok := range tokens {
				body := strings.TrimPrefix(tok, contract.TokenPrefix)
				require.False(t, bytes.Contains(raw, []byte(body)), "a token is in %s's history", id)
				require.False(t, bytes.Contains(decoded, []byte(body)), "a token is in %s's decoded history", id)
			}
		}
	})

	t.Run("phase change updates the search attribute and the memo", func(t *testing.T) {
		st, err := starter.SetClusterPhase(ctx, c, "sim-east", contract.SetPhaseRequest{Phase: contract.PhaseDraining, Reason: "maintenance", RequestedBy: "test"})
		require.NoError(t, err)
		require.Equal(t, contract.PhaseDraining, st.Declared.Phase)
		require.Eventually(t, func() bool {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("%s = 'draining'", contract.SAClusterPhase)})
			return err == nil && len(resp.Executions) == 1 && resp.Executions[0].Execution.WorkflowId == "cluster/sim-east"
		}, 20*time.Second, 100*time.Millisecond)
		l, err := starter.ListClusters(ctx, c, true)
		require.NoError(t, err)
		require.Len(t, l, 2)
		require.Equal(t, "sim-east", l[0].ID)
		require.Equal(t, contract.PhaseDraining, l[0].Declared.Phase)
		require.NotNil(t, l[0].Status)
		require.Equal(t, "maintenance", l[0].Status.LastPhaseChange.Reason)

		_, err = starter.SetClusterPhase(ctx, c, "sim-east", contract.SetPhaseRequest{Phase: "paused", Reason: "x"})
		require.ErrorContains(t, err, `phase "paused" is not one of`)
		_, err = starter.SetClusterPhase(ctx, c, "sim-east", contract.SetPhaseRequest{Phase: contract.PhaseActive, Reason: "done"})
		require.NoError(t, err)
	})

	t.Run("placement refusals name the field", func(t *testing.T) {
		pool := func(cluster string, p contract.Placement) contract.PoolSpec {
			return contract.PoolSpec{Key: types.PoolKey{Org: "acme", Project: "ml", Service: "train", Provider: "sim", Cluster: cluster},
				Policy: testsuite.FastPolicy(), Placement: p}
		}
		err := starter.CheckPlacement(ctx, c, pool("nowhere", contract.Placement{}))
		require.ErrorContains(t, err, "cluster nowhere is not enrolled")
		for field, p := range map[string]contract.Placement{
			"placement.regions":      {Regions: []string{"eu-central"}},
			"placement.residency":    {Residency: "gdpr"},
			"placement.capabilities": {Capabilities: []string{"nvlink"}},
		} {
			err := starter.CheckPlacement(ctx, c, pool("sim-east", p))
			require.ErrorContains(t, err, field)
			require.ErrorContains(t, err, "cluster sim-east")
		}
		fits := pool("sim-east", contract.Placement{Regions: []string{"us-east"}, Residency: "us-only", Capabilities: []string{"mig", "rdma"}})
		require.NoError(t, starter.CheckPlacement(ctx, c, fits))

		// ApplyPool refuses a mismatch before starting anything.
		bad := pool("sim-east", contract.Placement{Residency: "gdpr"})
		bad.Key.Service = "refused"
		_, err = starter.ApplyPool(ctx, c, bad, "")
		require.ErrorContains(t, err, "placement.residency")
		_, err = c.DescribeWorkflowExecution(ctx, bad.Key.WorkflowID(), "")
		require.Error(t, err, "a refused pool was started")
		res, err := starter.ApplyPool(ctx, c, fits, "")
		require.NoError(t, err)
		require.Equal(t, starter.PoolCreated, res)
	})
}

// historyBytes is every event of the workflow's history, proto-encoded:
// payloads appear there as the bytes the data converter wrote.
// historyBytes is the workflow's history as stored, or with every payload
// decoded when pc is given.
func historyBytes(t *testing.T, ctx context.Context, c client.Client, id string, pc *codec.PayloadCodec) []byte {
	t.Helper()
	var out []byte
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if pc != nil {
			require.NoError(t, proxy.VisitPayloads(ctx, ev, proxy.VisitPayloadsOptions{
				Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
					return pc.Decode(p)
				},
			}))
		}
		b, err := proto.Marshal(ev)
		require.NoError(t, err)
		out = append(out, b...)
	}
	return out
}
