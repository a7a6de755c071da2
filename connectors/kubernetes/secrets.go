package kubernetes

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// NewSecretReader reads secret: credential references inside an activity.
func NewSecretReader(client k8s.Interface) connectors.SecretReader {
	return secretReader{client: client}
}

type secretReader struct{ client k8s.Interface }

// ReadSecret returns one key of a secret. Errors name the secret and key,
// never a value.
func (r secretReader) ReadSecret(ctx context.Context, namespace, name, key string) ([]byte, error) {
	op := fmt.Sprintf("read secret %s/%s key %s", namespace, name, key)
	if namespace == "" || name == "" || key == "" {
		return nil, errclass.New(errclass.Permanent, providerName, op, errors.New("namespace, name and key must all be set"))
	}
	secret, err := r.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, classifyError(op, err)
	}
	value, ok := secret.Data[key]
	if !ok {
		return nil, errclass.New(errclass.NotFound, providerName, op, errors.New("the secret has no such key"))
	}
	return value, nil
}
