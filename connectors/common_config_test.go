package connectors_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// cloudConfig is a provider section as a connector writes one: the common
// parts embedded, its own fields beside them.
type cloudConfig struct {
	connectors.CommonConfig
	connectors.JoinConfig
	Region string `json:"region"`
}

func (c *cloudConfig) Validate(p connectors.Problems) {
	c.CheckCommon(p)
	c.CheckJoin(p)
	connectors.Required(p, "region", c.Region, "a region")
}

// The embedded parts' keys sit at the top of the section, as each
// provider's own fields did: the clusters file does not change.
func TestCommonConfigKeysStayAtTheSectionsTop(t *testing.T) {
	var c cloudConfig
	require.NoError(t, json.Unmarshal([]byte(`{"credentials":"env:K","clusterJoin":"file:/j","region":"r","catalog":[{"name":"s"}]}`), &c))
	assert.Equal(t, connectors.CredentialRef("env:K"), c.Credentials)
	assert.Equal(t, connectors.CredentialRef("file:/j"), c.ClusterJoin)
	assert.Equal(t, "s", c.Catalog[0].Name)
	c.Catalog = nil
	out, err := json.Marshal(&c)
	require.NoError(t, err)
	assert.JSONEq(t, `{"credentials":"env:K","clusterJoin":"file:/j","region":"r"}`, string(out))
}

func TestConfigErrorNamesEveryField(t *testing.T) {
	c := &cloudConfig{
		CommonConfig: connectors.CommonConfig{Catalog: []types.InstanceType{{Name: "a"}, {}, {Name: "a"}}},
		JoinConfig:   connectors.JoinConfig{ClusterJoin: "pasted-secret"},
	}
	err := connectors.ConfigError(c)
	require.Error(t, err)
	for _, want := range []string{
		"credentials: is empty",
		"catalog[1].name: is empty",
		`catalog[2].name: "a" is also catalog[0]`,
		"clusterJoin: is not a reference",
		"region: is empty",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "pasted-secret", "a value that is no reference may be a secret: never echoed")

	c = &cloudConfig{CommonConfig: connectors.CommonConfig{Credentials: "env:K"}, Region: "r"}
	assert.NoError(t, connectors.ConfigError(c))
}

func TestCatalogOrIsACopy(t *testing.T) {
	builtin := []types.InstanceType{{Name: "builtin"}}
	var c connectors.CommonConfig
	got := c.CatalogOr(builtin)
	got[0].Name = "edited"
	assert.Equal(t, "builtin", builtin[0].Name)

	c.Catalog = []types.InstanceType{{Name: "configured"}}
	got = c.CatalogOr(builtin)
	assert.Equal(t, "configured", got[0].Name)
	got[0].Name = "edited"
	assert.Equal(t, "configured", c.Catalog[0].Name)
}

func TestUserDataReadsNothingWithoutAReference(t *testing.T) {
	var j connectors.JoinConfig
	data, err := j.UserData(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, data)

	t.Setenv("VISOR_TEST_JOIN_DATA", "#cloud-config")
	j.ClusterJoin = "env:VISOR_TEST_JOIN_DATA"
	data, err = j.UserData(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "#cloud-config", data)
}

// A section's references are the loader's to anchor: the common part's
// alone when a Config adds none.
func TestCommonConfigCredentialRefs(t *testing.T) {
	c := &connectors.CommonConfig{Credentials: "file:k"}
	refs := c.CredentialRefs()
	require.Len(t, refs, 1)
	*refs[0] = "file:/abs/k"
	assert.Equal(t, connectors.CredentialRef("file:/abs/k"), c.Credentials)
}
