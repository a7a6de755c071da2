package connectors_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
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
