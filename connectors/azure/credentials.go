package azure

import (
	"errors"
	"strings"
)

// principal is a service principal's client-secret login.
type principal struct{ tenant, client, secret string }

// parsePrincipal splits TENANT_ID:CLIENT_ID:SECRET at the first two colons
// (a secret may hold more). Errors never echo the value.
func parsePrincipal(s string) (principal, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return principal{}, errors.New("must hold TENANT_ID:CLIENT_ID:CLIENT_SECRET")
	}
	return principal{tenant: parts[0], client: parts[1], secret: parts[2]}, nil
}
