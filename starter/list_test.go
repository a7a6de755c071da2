package starter

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPoolFilterQuery(t *testing.T) {
	q, err := PoolFilter{}.Query()
	require.NoError(t, err)
	require.Equal(t, "WorkflowType = 'PoolWorkflow' AND ExecutionStatus = 'Running'", q)

	q, err = PoolFilter{Org: "acme", Project: "web", Service: "api", Provider: "sim", Cluster: "east", State: "paused", IncludeClosed: true}.Query()
	require.NoError(t, err)
	require.Equal(t, "WorkflowType = 'PoolWorkflow' AND VisorOrg = 'acme' AND VisorProject = 'web' AND VisorService = 'api' AND VisorProvider = 'sim' AND VisorCluster = 'east' AND VisorState = 'paused'", q)
}

func TestPoolFilterQueryRefusesWhatCouldChangeTheQuery(t *testing.T) {
	for _, c := range []struct {
		f    PoolFilter
		want string
	}{
		{PoolFilter{Org: "acme' OR 'x'='x"}, `org "acme' OR 'x'='x" is not a lower-case DNS label`},
		{PoolFilter{Provider: "AWS"}, `provider "AWS" is not a lower-case DNS label`},
		{PoolFilter{State: "steady' OR 1=1"}, `state "steady' OR 1=1" is not one of`},
	} {
		_, err := c.f.Query()
		require.ErrorContains(t, err, c.want)
	}
}
