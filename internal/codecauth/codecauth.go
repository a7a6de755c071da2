// Package codecauth decides who may use the codec server: its /decode
// turns every payload of the namespace back into plain text, so only a
// caller who may read the namespace gets an answer. In the deployed shape
// the Temporal Web UI sits behind its OIDC login and forwards the user's
// access token (codec.passAccessToken, as Temporal's codec-server guidance
// has it); the token is checked with Temporal's own JWT claim mapper, the
// one the frontend uses, against the namespace the UI names (X-Namespace).
// Visor bearer tokens (the CLI, visor dev) are accepted from platform
// callers and readers.
package codecauth

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"

	"github.com/hanzoai/visor-fleet/auth"
)

// Checker authorizes codec-server requests.
type Checker struct {
	// Trust verifies Visor bearer tokens; nil accepts none.
	Trust *auth.Trust
	// OIDC maps an IdP's access token to Temporal claims; nil accepts none.
	OIDC authorization.ClaimMapper
	// Audience, when set, is the audience OIDC tokens must carry.
	Audience string
	Now      func() time.Time
}

// NewOIDC is Temporal's default JWT claim mapper over the IdP's JWKS
// (keys refreshed every refresh), reading roles from permissionsClaim
// ("permissions" when empty) as "<namespace>:<role>".
func NewOIDC(jwksURIs []string, permissionsClaim string, refresh time.Duration, logger log.Logger) authorization.ClaimMapper {
	cfg := &config.Authorization{
		JWTKeyProvider:       config.JWTKeyProvider{KeySourceURIs: jwksURIs, RefreshInterval: refresh},
		PermissionsClaimName: permissionsClaim,
	}
	return authorization.NewDefaultJWTClaimMapper(authorization.NewDefaultTokenKeyProvider(cfg, logger), cfg, logger)
}

// Authorize refuses a request whose caller may not read the namespace it
// names; the error says why (the handler answers 401).
func (c Checker) Authorize(r *http.Request) error {
	token := r.Header.Get("Authorization")
	ns := r.Header.Get("X-Namespace")
	if token == "" {
		return errors.New("no Authorization header (the Web UI forwards its user's token when codec.passAccessToken is on)")
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	var whyNot []error
	if c.Trust != nil {
		caller, err := auth.VerifyBearer(*c.Trust, token, now())
		switch {
		case err == nil && (caller.IsPlatform() || caller.IsReader()):
			return nil
		case err == nil:
			return fmt.Errorf("caller %s acts for orgs %v: the codec server decodes for platform operators and readers", caller.Subject, caller.Orgs)
		}
		whyNot = append(whyNot, fmt.Errorf("not a Visor bearer token: %w", err))
	}
	if c.OIDC != nil {
		claims, err := c.OIDC.GetClaims(&authorization.AuthInfo{AuthToken: token, Audience: c.Audience})
		if err == nil {
			if claims.System&(authorization.RoleReader|authorization.RoleWriter|authorization.RoleAdmin) != 0 {
				return nil
			}
			if ns == "" {
				return fmt.Errorf("user %s: the request names no namespace (X-Namespace)", claims.Subject)
			}
			if claims.Namespaces[ns]&(authorization.RoleReader|authorization.RoleWriter|authorization.RoleAdmin) != 0 {
				return nil
			}
			return fmt.Errorf("user %s may not read namespace %q", claims.Subject, ns)
		}
		whyNot = append(whyNot, fmt.Errorf("not a valid OIDC access token: %w", err))
	}
	if len(whyNot) == 0 {
		return errors.New("the codec server trusts no caller (give it --trust or --oidc-jwks)")
	}
	return errors.Join(whyNot...)
}
