package kubernetes

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

func TestSecretReaderResolvesCredentialReferences(t *testing.T) {
	client := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "visor", Name: "do"},
		Data:       map[string][]byte{"token": []byte("dop_v1_s3cret\n")},
	})
	reader := NewSecretReader(client)
	ctx := context.Background()

	token, err := connectors.CredentialRef("secret:visor/do/token").Resolve(ctx, reader)
	require.NoError(t, err)
	assert.Equal(t, "dop_v1_s3cret", token)

	_, err = reader.ReadSecret(ctx, "visor", "do", "missing")
	assert.True(t, errclass.IsNotFound(err))
	assert.Contains(t, err.Error(), "visor/do key missing")
	assert.NotContains(t, err.Error(), "s3cret")

	_, err = reader.ReadSecret(ctx, "visor", "absent", "token")
	assert.True(t, errclass.IsNotFound(err))

	_, err = reader.ReadSecret(ctx, "visor", "", "token")
	assert.True(t, errclass.IsPermanent(err))
}
