package workflows

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/law"
	"github.com/hanzoai/visor-fleet/poolcore"
)

// readRulesWorkflow runs readRules alone, as a pool run's start does.
func readRulesWorkflow(ctx workflow.Context) (poolcore.Rules, error) {
	return readRules(ctx), nil
}

func runReadRules(t *testing.T, old ...string) poolcore.Rules {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	for _, id := range old {
		env.OnGetVersion(id, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	}
	env.RegisterWorkflow(readRulesWorkflow)
	env.ExecuteWorkflow(readRulesWorkflow)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got poolcore.Rules
	require.NoError(t, env.GetWorkflowResult(&got))
	return got
}

// A new run decides with every rule: readRules starts from law.AllRules,
// so a rule added there reaches a pool without a line here.
func TestReadRulesOfANewRunAgreeWithAllRules(t *testing.T) {
	got := runReadRules(t)
	lawRules := law.AllRules()
	lawRules.Prewarm = true // a pool run carries the demand model the law's pre-warm needs
	require.Equal(t, lawRules, got.Rules)
	require.Equal(t, poolcore.AllRules(), got)
	// Every rule is on in a new run: a switch left false in AllRules or
	// allRunRules would never reach a pool.
	for _, v := range []reflect.Value{reflect.ValueOf(got.Rules), reflect.ValueOf(got)} {
		for i := range v.NumField() {
			if f := v.Field(i); f.Kind() == reflect.Bool {
				require.True(t, f.Bool(), "rule %s is off in a new run", v.Type().Field(i).Name)
			}
		}
	}
}

// A run begun before a change ID keeps its rule off, and only that rule.
func TestReadRulesOfAnOldRunTurnOffItsChanges(t *testing.T) {
	got := runReadRules(t, versionReplace, changeOfferings)
	want := poolcore.AllRules()
	want.Replace, want.ReplaceGPU, want.ReplaceAtRate, want.Offerings = false, false, false, false // GPU replacement and its rate are replacement's
	require.Equal(t, want, got)

	got = runReadRules(t, versionBatch, versionRebuyRepelled)
	want = poolcore.AllRules()
	want.Batch, want.RebuyRepelled = false, false
	require.Equal(t, want, got)

	got = runReadRules(t, changePackIdle, changeLookAhead, changeReplaceAtRate, changeFreshScaleDown)
	want = poolcore.AllRules()
	want.PackIdle, want.LookAhead, want.ReplaceAtRate, want.FreshScaleDown = false, false, false, false
	require.Equal(t, want, got)

	got = runReadRules(t, changePrewarm)
	want = poolcore.AllRules()
	want.Prewarm = false
	require.Equal(t, want, got)

	got = runReadRules(t, changePackAnyOrder)
	want = poolcore.AllRules()
	want.PackAnyOrder = false
	require.Equal(t, want, got)
}
