package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/hanzoai/visor-fleet/connectors/sim"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/types"
)

const (
	batchPool  = "pool/initech/billing/batch/sim/sim-cli"
	reportPool = "pool/initech/billing/report/sim/sim-cli"
)

func applyJSON(t *testing.T, file string) map[string]string {
	t.Helper()
	var outcomes []applyOutcome
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "pool", "apply", "-f", file, "-o", "json")), &outcomes))
	got := map[string]string{}
	for _, o := range outcomes {
		got[o.Pool] = o.Result
	}
	return got
}

func TestPoolApplyIsIdempotentAndRefusesBadFilesWhole(t *testing.T) {
	_, _, err := visor(t, "pool", "apply", "-f", "testdata/apply-bad.yaml")
	require.ErrorContains(t, err, `testdata/apply-bad.yaml: pools[1] (pool/Initech/billing/audit/sim/sim-cli): key: org "Initech" is not a lower-case DNS label`)
	require.ErrorContains(t, err, `testdata/apply-bad.yaml: pools[2] (pool/initech/billing/tax/sim/sim-cli): policy.minNodes: 5 is greater than maxNodes 2`)
	// The file's one good pool was not started either.
	_, _, err = visor(t, "pool", "describe", "pool/initech/billing/ledger/sim/sim-cli")
	require.ErrorContains(t, err, "is the ID right")
	_, _, err = visor(t, "pool", "apply")
	require.ErrorContains(t, err, "say which spec file to apply with -f FILE")
	_, _, err = visor(t, "pool", "apply", "-f", "testdata/missing.yaml")
	require.EqualError(t, err, "testdata/missing.yaml: no such file or directory", "the path once")

	// A file with demo sections says pool apply does not read them.
	_, stderr, err := visor(t, "pool", "apply", "-f", "testdata/fleet.yaml")
	require.NoError(t, err)
	require.Contains(t, stderr, "note: pool apply ignores the demo section of pool/")
	require.Contains(t, stderr, "visor demo pods POOL --count N")

	out := mustVisor(t, "pool", "apply", "-f", "testdata/apply.yaml")
	require.Regexp(t, `(?m)^POOL\s+RESULT$`, out)
	require.Regexp(t, `(?m)^`+batchPool+`\s+created$`, out)
	require.Regexp(t, `(?m)^`+reportPool+`\s+created$`, out)

	require.Equal(t, map[string]string{batchPool: "unchanged", reportPool: "unchanged"}, applyJSON(t, "testdata/apply.yaml"))
	require.Equal(t, map[string]string{batchPool: "unchanged", reportPool: "policy updated"}, applyJSON(t, "testdata/apply-report-wider.yaml"))
	require.Equal(t, 5, describeJSON(t, reportPool).Policy.MaxNodes)
	require.Equal(t, map[string]string{batchPool: "unchanged", reportPool: "unchanged"}, applyJSON(t, "testdata/apply-report-wider.yaml"))

	// delete --wait drains the pool and returns once its workflow completed.
	out = mustVisor(t, "pool", "delete", reportPool, "--reason", "retired", "--wait")
	require.Regexp(t, `^`+reportPool+`: deregistered \(state deregistered, released (no node|\d+ nodes?: [^ ]+)`, out)
	require.NotRegexp(t, `\(state deregistered, \d+ nodes?\)`, out, "delete --wait names what it released, not the count it started from")
	eventually(t, 20*time.Second, "the completed pool listed only with --all", func() error {
		if got := ids(listJSON(t, "--org", "initech", "--service", "report")); len(got) != 0 {
			return fmt.Errorf("running pools %v", got)
		}
		all := listJSON(t, "--org", "initech", "--service", "report", "--all")
		if len(all) != 1 || all[0].Status != "Completed" || all[0].State != "deregistered" {
			return fmt.Errorf("with --all: %+v", all)
		}
		return nil
	})
	_, _, err = visor(t, "pool", "scale", reportPool, "--to", "2", "--reason", "too late")
	require.ErrorContains(t, err, reportPool+": ")
}

// TestPoolRefusesWhileDeregistering holds a pool in its deregistering
// drain with a PodDisruptionBudget that allows no eviction, then checks
// that apply, scale and pause are refused with the validators' reasons.
func TestPoolRefusesWhileDeregistering(t *testing.T) {
	mustVisor(t, "pool", "apply", "-f", "testdata/apply.yaml")
	key, err := types.ParsePoolID(batchPool)
	require.NoError(t, err)
	cluster := env.fleet.Sims["sim-cli"]
	require.NoError(t, cluster.AddDemand(key, sim.DemandProfile{Shape: "steady", Pods: 2, Requests: types.Resources{MilliCPU: 500, Memory: types.GiB}}))
	cs := cluster.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "batch"}}
	eventually(t, 30*time.Second, "two batch pods running", func() error {
		pods, err := cs.CoreV1().Pods("initech").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=batch"})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				running++
			}
		}
		if running != 2 {
			return fmt.Errorf("%d running", running)
		}
		return nil
	})
	minAvailable := intstr.FromInt32(2)
	_, err = cs.PolicyV1().PodDisruptionBudgets("initech").Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "batch-all", Namespace: "initech"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: selector},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, 10*time.Second, "the budget allowing no disruption", func() error {
		pdb, err := cs.PolicyV1().PodDisruptionBudgets("initech").Get(ctx, "batch-all", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pdb.Status.CurrentHealthy != 2 || pdb.Status.DisruptionsAllowed != 0 {
			return fmt.Errorf("status %+v", pdb.Status)
		}
		return nil
	})

	// Deregistering drains the nodes of a fresh observation, and the worker
	// shares cluster observations for up to 2s: wait until any it could use
	// shows the node the pods run on.
	podsRunning := time.Now()
	eventually(t, 20*time.Second, "an observation of the batch node newer than the pods", func() error {
		st := describeJSON(t, batchPool)
		if st.Nodes < 1 || time.Since(podsRunning) < 3*time.Second {
			return fmt.Errorf("nodes %d", st.Nodes)
		}
		return nil
	})

	out := mustVisor(t, "pool", "delete", batchPool, "--reason", "retire batch")
	require.Regexp(t, `^`+batchPool+`: deregistering \(state deregistering, `, out)

	stdout, _, err := visor(t, "pool", "apply", "-f", "testdata/apply-batch-wider.yaml")
	require.ErrorContains(t, err, "1 of 1 pool not applied:\n"+batchPool+" refused the policy: pool is deregistering: set-policy refused")
	require.Regexp(t, `(?m)^`+batchPool+`\s+failed$`, stdout)
	_, _, err = visor(t, "pool", "scale", batchPool, "--to", "2", "--reason", "more")
	require.ErrorContains(t, err, batchPool+" refused scale: pool is deregistering: scale refused")
	_, _, err = visor(t, "pool", "pause", batchPool, "--reason", "hold")
	require.ErrorContains(t, err, batchPool+" refused pause: pool is deregistering")
	st := describeJSON(t, batchPool)
	require.True(t, st.Deregistering)
	require.Equal(t, 4, st.Policy.MaxNodes, "the refused policy changed nothing")

	// Let the drain through and wait for the pool to finish.
	require.NoError(t, cs.PolicyV1().PodDisruptionBudgets("initech").Delete(ctx, "batch-all", metav1.DeleteOptions{}))
	require.NoError(t, env.client.GetWorkflow(ctx, batchPool, "").Get(ctx, nil))
}

// expireAfter's default is for new pools: a running pool whose spec does
// not write it keeps its own (off here, as for a pool from before expiry),
// or every node older than 720h would be due at once.
func TestPoolApplyLeavesARunningPoolsExpiryAlone(t *testing.T) {
	const (
		oldPool = "pool/initech/expiry/old/sim/sim-cli"
		newPool = "pool/initech/expiry/new/sim/sim-cli"
	)
	out, stderr, err := visor(t, "pool", "apply", "-f", "testdata/apply-expiry-off.yaml")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^`+oldPool+`\s+created$`, out)
	require.NotContains(t, stderr, "expireAfter", "a written expireAfter needs no note")
	require.Zero(t, describeJSON(t, oldPool).Policy.ExpireAfter)

	out, stderr, err = visor(t, "pool", "apply", "-f", "testdata/apply-expiry-unwritten.yaml")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^`+oldPool+`\s+unchanged$`, out)
	require.Regexp(t, `(?m)^`+newPool+`\s+created$`, out)
	require.Contains(t, stderr, "note: "+newPool+": expireAfter 720h by default: nodes older than that are replaced (write expireAfter: 0s to keep them)")
	require.Contains(t, stderr, "note: "+oldPool+": expireAfter not written: expiry stays off for this running pool")
	require.Zero(t, describeJSON(t, oldPool).Policy.ExpireAfter)
	require.Equal(t, types.Duration(types.DefaultExpireAfter), describeJSON(t, newPool).Policy.ExpireAfter)

	// A policy change without expireAfter goes through set-policy and still
	// keeps each pool's own expiry.
	var outcomes []applyOutcome
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "pool", "apply", "-f", "testdata/apply-expiry-wider.yaml", "-o", "json")), &outcomes))
	require.Equal(t, []applyOutcome{
		{Pool: oldPool, Result: "policy updated", Expiry: "expireAfter not written: expiry stays off for this running pool (write expireAfter to turn it on)"},
		{Pool: newPool, Result: "policy updated"},
	}, outcomes)
	old := describeJSON(t, oldPool).Policy
	require.Equal(t, 5, old.MaxNodes)
	require.Zero(t, old.ExpireAfter)
	require.Equal(t, types.Duration(types.DefaultExpireAfter), describeJSON(t, newPool).Policy.ExpireAfter)
	// apply reads which pools already hold their file's policy from the
	// visibility listing's memo, which trails the pool by the visibility
	// store's lag (seconds on a loaded machine): wait until it shows the
	// wider policy, or the revert below reads as unchanged.
	waitListedPolicy(t, oldPool, old)
	// Written again, expiry is what the spec says.
	require.Equal(t, map[string]string{oldPool: "policy updated"}, applyJSON(t, "testdata/apply-expiry-off.yaml"))
	require.Equal(t, 4, describeJSON(t, oldPool).Policy.MaxNodes)
}

// waitListedPolicy waits until the visibility listing's memo of pool
// shows policy.
func waitListedPolicy(t *testing.T, pool string, policy types.Policy) {
	t.Helper()
	want := contract.PolicyHash(policy)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := env.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: env.namespace, Query: fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus = 'Running'", pool)})
		cancel()
		require.NoError(t, err)
		for _, e := range resp.GetExecutions() {
			if p, ok := e.GetMemo().GetFields()[contract.MemoPolicyHash]; ok {
				var got string
				if converter.GetDefaultDataConverter().FromPayload(p, &got) == nil && got == want {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listing of %s did not show policy %s within 30 s", pool, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
