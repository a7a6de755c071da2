package aws

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestNewRejectsBadCredentialsNamingTheReference(t *testing.T) {
	ctx := context.Background()
	base := Config{Region: "us-east-1", Mode: ModeASG}

	cfg := base
	cfg.Credentials = "env:VISOR_TEST_AWS_UNSET_VARIABLE"
	_, err := New(ctx, cfg, nil)
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
	assert.Contains(t, err.Error(), "VISOR_TEST_AWS_UNSET_VARIABLE")

	file := filepath.Join(t.TempDir(), "aws")
	require.NoError(t, os.WriteFile(file, []byte("AKIDONLY-no-secret-here\n"), 0o600))
	cfg.Credentials = connectors.CredentialRef("file:" + file)
	_, err = New(ctx, cfg, nil)
	assert.True(t, errclass.IsPermanent(err), "got %v", err)
	assert.Contains(t, err.Error(), file)
	assert.NotContains(t, err.Error(), "AKIDONLY", "the secret never appears")

	require.NoError(t, os.WriteFile(file, []byte("AKID:SECRET:TOKEN\n"), 0o600))
	p, err := New(ctx, cfg, nil)
	require.NoError(t, err)
	creds, err := p.ec2.Options().Credentials.Retrieve(ctx)
	require.NoError(t, err)
	assert.Equal(t, "AKID", creds.AccessKeyID)
	assert.Equal(t, "SECRET", creds.SecretAccessKey)
	assert.Equal(t, "TOKEN", creds.SessionToken)
}

func TestNewValidatesConfig(t *testing.T) {
	t.Setenv("VISOR_TEST_AWS_CRED", "a:b")
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"no credentials": {Config{Region: "us-east-1", Mode: ModeEC2}, "credentials: is empty"},
		"no region":      {Config{CommonConfig: connectors.CommonConfig{Credentials: "env:VISOR_TEST_AWS_CRED"}, Mode: ModeEC2}, "region: is empty"},
		"bad mode":       {Config{CommonConfig: connectors.CommonConfig{Credentials: "env:VISOR_TEST_AWS_CRED"}, Region: "us-east-1", Mode: "lambda"}, `"lambda"`},
		"eks no cluster": {Config{CommonConfig: connectors.CommonConfig{Credentials: "env:VISOR_TEST_AWS_CRED"}, Region: "us-east-1", Mode: ModeEKS}, "clusterName: is empty"},
	} {
		_, err := New(context.Background(), tc.cfg, nil)
		assert.True(t, errclass.IsPermanent(err), "%s: %v", name, err)
		assert.Contains(t, err.Error(), tc.want, name)
	}
}

func TestParseCredential(t *testing.T) {
	for _, bad := range []string{"", "onlyone", "a:", ":b", "a:b:c:d", "a: :c"} {
		_, err := parseCredential(bad)
		assert.Error(t, err, "%q", bad)
	}
	c, err := parseCredential("AKID:se/cr+et")
	require.NoError(t, err)
	assert.Equal(t, "se/cr+et", c.SecretAccessKey)
	assert.Empty(t, c.SessionToken)
}

func TestArgumentsAreCheckedBeforeAnyCall(t *testing.T) {
	t.Setenv("VISOR_TEST_AWS_CRED", "a:b")
	// Port 9 (discard) on loopback: any call that did go out would fail as Retryable.
	raw, err := New(context.Background(), Config{CommonConfig: connectors.CommonConfig{Credentials: "env:VISOR_TEST_AWS_CRED"}, Region: "us-east-1", Mode: ModeASG, Endpoint: "http://127.0.0.1:9"}, nil)
	require.NoError(t, err)
	p := connectors.Checked(raw) // as every worker builds it
	ctx := context.Background()
	pool := testPool("args")
	checks := map[string]error{
		"empty group":     p.SetTargetSize(ctx, "", 1, "k"),
		"negative target": p.SetTargetSize(ctx, "g", -1, "k"),
		"empty key":       p.SetTargetSize(ctx, "g", 1, ""),
		"bad pool":        func() error { _, err := p.NodeGroups(ctx, testPool("Bad_Name")); return err }(),
		"no size":         func() error { _, err := p.CreateNodeGroup(ctx, connectors.NodeGroupSpec{Pool: pool}, "k"); return err }(),
		"empty node":      p.DeleteNodes(ctx, "g", []string{""}, "k"),
	}
	for name, err := range checks {
		assert.True(t, errclass.IsPermanent(err), "%s: %v", name, err)
	}
	assert.NoError(t, p.DeleteNodes(ctx, "g", nil, "k"), "nothing to delete")

	cat, err := raw.Catalog(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, cat)
	for _, it := range cat {
		a := it.Allocatable()
		assert.False(t, a.IsNegative(), it.Name)
		assert.Less(t, a.MilliCPU, it.MilliCPU, it.Name)
		assert.Positive(t, it.HourlyPrice, it.Name)
	}
}
