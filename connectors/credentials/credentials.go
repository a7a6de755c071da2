// Package credentials resolves credential references inside activities.
// It is a leaf (only errclass below it), so the worker's auth keys, the
// codec's keys and the metering sinks resolve references without linking
// the connectors.
package credentials

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// Ref names where a secret lives, never the secret itself, so it
// can travel through workflow and activity arguments safely. Forms:
//
//	env:NAME                     an environment variable of the worker
//	file:/path/to/token          a file on the worker
//	secret:namespace/name/key    a Kubernetes secret key
type Ref string

// SecretReader reads Kubernetes secrets; the kubernetes connector provides one.
type SecretReader interface {
	ReadSecret(ctx context.Context, namespace, name, key string) ([]byte, error)
}

// Resolve reads the secret behind ref inside the activity. Errors name the
// reference, never the value, and are Permanent: a missing credential does
// not appear by retrying.
func (ref Ref) Resolve(ctx context.Context, secrets SecretReader) (string, error) {
	kind, rest, ok := strings.Cut(string(ref), ":")
	fail := func(err error) (string, error) {
		return "", errclass.New(errclass.Permanent, "credentials", "resolve "+string(ref), err)
	}
	if !ok || rest == "" {
		return fail(errors.New("reference must be env:NAME, file:PATH or secret:NAMESPACE/NAME/KEY"))
	}
	var v string
	switch kind {
	case "env":
		val, set := os.LookupEnv(rest)
		if !set {
			return fail(fmt.Errorf("environment variable %s is not set on this worker", rest))
		}
		v = val
	case "file":
		b, err := os.ReadFile(rest)
		if err != nil {
			return fail(fmt.Errorf("cannot read credential file: %w", err))
		}
		v = string(b)
	case "secret":
		parts := strings.Split(rest, "/")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return fail(errors.New("secret reference must be secret:NAMESPACE/NAME/KEY"))
		}
		if secrets == nil {
			return fail(errors.New("no Kubernetes access on this worker to read secrets"))
		}
		b, err := secrets.ReadSecret(ctx, parts[0], parts[1], parts[2])
		if err != nil {
			return fail(fmt.Errorf("cannot read secret: %w", err))
		}
		v = string(b)
	default:
		return fail(fmt.Errorf("unknown reference kind %q", kind))
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return fail(errors.New("credential is empty"))
	}
	return v, nil
}
