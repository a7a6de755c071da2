package credentials

import (
	"context"
	"fmt"

	"golang.org/x/net/http/httpguts"

	"github.com/hanzoai/visor-fleet/connectors/errclass"
)

// ResolveToken resolves ref to an API token that travels in an HTTP header,
// for provider's New. A value that cannot (say, a file holding more than the
// token) is a Permanent "configure" error naming the reference, never the
// value.
func (ref Ref) ResolveToken(ctx context.Context, secrets SecretReader, provider string) (string, error) {
	token, err := ref.Resolve(ctx, secrets)
	if err != nil {
		return "", err
	}
	if !httpguts.ValidHeaderFieldValue(token) {
		return "", errclass.New(errclass.Permanent, provider, "configure",
			fmt.Errorf("the credential from %s is not an API token: it holds control characters", ref))
	}
	return token, nil
}
