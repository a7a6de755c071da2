package devserver

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/temporal"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/auth/frontend"
)

// UISubject is the Web UI's own caller: the frontend lets it read, never
// write, so the UI cannot be used to move a pool.
const UISubject = "system:ui"

// claimMapper turns a Visor bearer token (auth.VerifyBearer) into Temporal
// claims: a caller for every org ("*") is a system admin (the worker, the
// dev admin), UISubject or a caller for no org (auth.ReadOnly) a system
// reader, and a tenant caller a writer on
// the namespace. Which org's pools a tenant may move is the workflows'
// check; the frontend only decides who may talk at all.
type claimMapper struct {
	trust     auth.Trust
	namespace string
	now       func() time.Time
}

var _ authorization.ClaimMapper = claimMapper{}

// GetClaims verifies the token; an error makes the frontend refuse the call
// ("Request unauthorized") and log why.
func (m claimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	caller, err := auth.VerifyBearer(m.trust, info.AuthToken, m.now())
	if err != nil {
		return nil, fmt.Errorf("visor bearer token: %w", err)
	}
	c := &authorization.Claims{Subject: caller.Subject, AuthType: "visor"}
	switch {
	case caller.Subject == UISubject || caller.IsReader():
		c.System = authorization.RoleReader
	case slices.Contains(caller.Orgs, auth.AllOrgs):
		c.System = authorization.RoleAdmin
	default:
		c.Namespaces = map[string]authorization.Role{m.namespace: authorization.RoleWriter | authorization.RoleWorker}
		c.Extensions = tenantOrgs(caller.Orgs)
	}
	return c, nil
}

// tenantOrgs marks a caller limited to these orgs (claims' Extensions).
type tenantOrgs []string

// tenantAuthorizer is Temporal's default authorizer, and for a tenant
// caller also frontend.TenantMay: a writer on the namespace could
// otherwise terminate, reset or start another org's pool, which no
// workflow code would ever see.
type tenantAuthorizer struct {
	base   authorization.Authorizer
	look   frontend.Activities
	quotas *frontend.Quotas
}

func (a tenantAuthorizer) Authorize(ctx context.Context, caller *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	res, err := a.base.Authorize(ctx, caller, target)
	if err != nil || res.Decision != authorization.DecisionAllow || caller == nil {
		return res, err
	}
	if orgs, ok := caller.Extensions.(tenantOrgs); ok && target.Request != nil {
		if err := frontend.TenantMay(ctx, target.APIName, target.Request, orgs, a.look); err != nil {
			return authorization.Result{Decision: authorization.DecisionDeny, Reason: err.Error()}, nil
		}
		if err := a.quotas.Admit(ctx, target.APIName, target.Request); err != nil {
			return authorization.Result{Decision: authorization.DecisionDeny, Reason: err.Error()}, nil
		}
	}
	return res, nil
}

// loopbackAddress reaches the frontend from this process, on loopback when
// it listens on every address.
func loopbackAddress(ip string, port int) string {
	if a := net.ParseIP(ip); a == nil || a.IsUnspecified() {
		ip = "127.0.0.1"
	}
	return net.JoinHostPort(ip, strconv.Itoa(port))
}

// authServerOptions enforce the bearer token on the public frontend with
// Temporal's default authorizer. The server's own system worker talks to an
// internal frontend instead (see buildConfig), which only listens on
// loopback and maps every caller to the internal principal.
func authServerOptions(opts Options) []temporal.ServerOption {
	if opts.Trust == nil {
		return nil
	}
	m := claimMapper{trust: *opts.Trust, namespace: opts.Namespace, now: time.Now}
	look := newActivityLookup(loopbackAddress(opts.IP, opts.GRPCPort), opts.Namespace, *opts.Credential)
	return []temporal.ServerOption{
		temporal.WithAuthorizer(tenantAuthorizer{base: authorization.NewDefaultAuthorizer(), look: look,
			quotas: frontend.NewQuotas(opts.OrgLimits, opts.tenantQuota(), look)}),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return m }),
	}
}
