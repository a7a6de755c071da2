package clusterconfig_test

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/hanzoai/visor-fleet/activities"
	"github.com/hanzoai/visor-fleet/types"
)

// Through a real activity: the Source is what the worker's activities
// resolve clusters with, and a credential problem reaches Temporal as a
// non-retryable error of type Permanent.
func TestActivitiesResolveClustersThroughTheSource(t *testing.T) {
	var ts testsuite.WorkflowTestSuite

	t.Run("sim cluster observes", func(t *testing.T) {
		env := ts.NewTestActivityEnvironment()
		env.RegisterActivity(&activities.Activities{Clusters: newSource(t, mustLoad(t, simFile))})
		key := types.PoolKey{Org: "acme", Project: "shop", Service: "api", Provider: "sim", Cluster: "lab"}
		val, err := env.ExecuteActivity((&activities.Activities{}).ObservePool, key)
		require.NoError(t, err)
		var obs types.PoolObservation
		require.NoError(t, val.Get(&obs))
		assert.Equal(t, key, obs.Pool)
		assert.False(t, obs.ObservedAt.IsZero())
	})

	t.Run("missing credential is non-retryable", func(t *testing.T) {
		const missing = "VISOR_CLUSTERCONFIG_TEST_ACTIVITY_UNSET"
		require.NoError(t, os.Unsetenv(missing))
		env := ts.NewTestActivityEnvironment()
		env.RegisterActivity(&activities.Activities{Clusters: newSource(t, doFile(t, newDOAPI(t), "env:"+missing))})
		_, err := env.ExecuteActivity((&activities.Activities{}).ObservePool, doPool)
		require.Error(t, err)
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), "%v", err)
		assert.True(t, appErr.NonRetryable())
		assert.Equal(t, "Permanent", appErr.Type())
		assert.Contains(t, appErr.Error(), "env:"+missing)
	})
}
