package connectors_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

type emptyConfig struct{}

func (*emptyConfig) Validate(connectors.Problems) {}

func TestRegisterRefusesIncompleteAndDuplicateKinds(t *testing.T) {
	build := func(context.Context, emptyConfig, connectors.SecretReader) (connectors.Provider, func(context.Context) error, error) {
		return &recorder{}, nil, nil
	}
	assert.Panics(t, func() { connectors.Register(connectors.Kind{Name: "half"}) })
	connectors.Register(connectors.CloudKind[emptyConfig]("registry-test", build, nil))
	assert.Panics(t, func() { connectors.Register(connectors.CloudKind[emptyConfig]("registry-test", build, nil)) })

	k, ok := connectors.LookupKind("registry-test")
	require.True(t, ok)
	assert.Contains(t, connectors.KindNames(), "registry-test")
	_, err := k.Build(context.Background(), &emptyConfig{}, connectors.BuildEnv{})
	require.NoError(t, err)
	_, err = k.Build(context.Background(), nil, connectors.BuildEnv{})
	assert.ErrorContains(t, err, "configuration is <nil>")

	_, err = connectors.CatalogOf("registry-test")
	assert.ErrorContains(t, err, "no built-in catalog")
	_, err = connectors.CatalogOf("nowhere")
	assert.ErrorContains(t, err, `"nowhere" is not a registered kind`)
}

// A stateless kind builds from the package's New as written; a failed New
// is an error and never a non-nil Provider around a nil pointer.
func TestStatelessKindBuildsFromNewAndKeepsAFailureNil(t *testing.T) {
	fail := false
	newRecorder := func(context.Context, emptyConfig, connectors.SecretReader) (*recorder, error) {
		if fail {
			return nil, errors.New("bad region")
		}
		return &recorder{}, nil
	}
	catalog := func() []types.InstanceType { return []types.InstanceType{{Name: "one"}} }
	k := connectors.StatelessKind[emptyConfig]("stateless-test", newRecorder, catalog)
	built, err := k.Build(context.Background(), &emptyConfig{}, connectors.BuildEnv{})
	require.NoError(t, err)
	assert.NotNil(t, built.Provider)
	assert.Nil(t, built.Release)
	assert.Equal(t, "one", k.Catalog()[0].Name)

	fail = true
	built, err = k.Build(context.Background(), &emptyConfig{}, connectors.BuildEnv{})
	assert.ErrorContains(t, err, "bad region")
	assert.True(t, built.Provider == nil, "a failed New yields no provider")
}
