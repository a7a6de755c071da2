package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
	"github.com/hanzoai/visor-fleet/poolcore"
	"github.com/hanzoai/visor-fleet/types"
)

// Two readers of the worker's trust (issuer and system public keys):
//
//   - update validators read the worker's own, set by UseTrust when the
//     worker registers the workflows. Validators never run on replay, so
//     the process's configuration is safe to read there, and a request is
//     refused before it enters history.
//   - signal handling (force-scale, observe, watcher-report) runs on replay
//     too, so it verifies with the trust the run read through the Trust
//     activity, recorded in history.
//
// A worker configured without trust leaves the workflows open: a
// development stack or a test worker has no keys to check against.

var workerTrust atomic.Pointer[auth.Trust]

// UseTrust sets the trust update validators check callers against; nil
// leaves them open.
func UseTrust(t *auth.Trust) { workerTrust.Store(t) }

// validatorAuthority is the authority update validators use.
func validatorAuthority() *authority { return &authority{trust: workerTrust.Load()} }

// authority is one reading of the trust.
type authority struct {
	trust *auth.Trust
	// refresh is set when a request named a key the run does not know:
	// the loop reads the trust again (a key rotated since the run began).
	refresh bool
}

// maxNoncesKept bounds the replay-protection memory; nonces older than
// twice the skew are forgotten anyway, since their At no longer verifies.
const maxNoncesKept = 1000

// load reads the worker's trust. No trust configured means open; any
// other failure keeps what the run had.
func (au *authority) load(ctx workflow.Context) error {
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{"NoTrust"}},
	})
	var t auth.Trust
	err := workflow.ExecuteLocalActivity(lctx, a.Trust).Get(ctx, &t)
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		au.trust = &t
	case errors.As(err, &appErr) && appErr.Type() == "NoTrust":
		au.trust = nil
	default:
		return err
	}
	au.refresh = false
	return nil
}

// open reports whether this run enforces nothing.
func (au *authority) open() bool { return au.trust == nil }

// caller verifies a mutating request's authorization for workflowID and
// message and returns the verified caller. The body is the request as
// decoded, re-encoded: the "auth" field is left out of what is signed.
func (au *authority) caller(workflowID, message string, req any, a *contract.Authorization, nonces map[string]time.Time, now time.Time) (auth.Caller, error) {
	if a == nil {
		return auth.Caller{}, fmt.Errorf("%s refused: the request carries no authorization; send it with a caller credential (visor --credential, or starter's ConnectOptions.Credential)", message)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return auth.Caller{}, fmt.Errorf("%s refused: %w", message, err)
	}
	c, err := auth.Verify(*au.trust, *a, workflowID, message, body, now)
	if err != nil {
		if strings.Contains(err.Error(), "is not trusted") {
			au.refresh = true
		}
		return auth.Caller{}, fmt.Errorf("%s refused: %w", message, err)
	}
	if _, seen := nonces[a.Nonce]; seen {
		return auth.Caller{}, fmt.Errorf("%s refused: its nonce was already used (a replayed request)", message)
	}
	return c, nil
}

// forOrg verifies a request against a pool's org.
func (au *authority) forOrg(key types.PoolKey, message string, req any, a *contract.Authorization, nonces map[string]time.Time, now time.Time) (string, error) {
	if au.open() {
		return "", nil
	}
	c, err := au.caller(key.WorkflowID(), message, req, a, nonces, now)
	if err != nil {
		return "", err
	}
	if !c.MayActFor(key.Org) {
		return "", fmt.Errorf("%s refused: caller %q may act for %s, not for org %q", message, c.Subject, orgList(c.Orgs), key.Org)
	}
	return c.Subject, nil
}

func orgList(orgs []string) string {
	if len(orgs) == 0 {
		return "no org"
	}
	return "org " + strings.Join(orgs, ", ")
}

// systemInput verifies a trusted input (observe, watcher-report): signed
// by a system key only workers hold. Open when the trust names no system
// key.
func (au *authority) systemInput(workflowID, message string, v any, sig *types.SystemSignature, now time.Time) error {
	if au.open() || len(au.trust.System) == 0 {
		return nil
	}
	if sig == nil {
		return fmt.Errorf("%s refused: not signed by a worker's system key", message)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s refused: %w", message, err)
	}
	if err := auth.VerifySystem(*au.trust, *sig, workflowID, message, body, now); err != nil {
		if strings.Contains(err.Error(), "is not trusted") {
			au.refresh = true
		}
		return fmt.Errorf("%s refused: %w", message, err)
	}
	return nil
}

// subjectOf names the caller of a request the validator accepted; "" when
// the run is open or the request unsigned.
func subjectOf(a *contract.Authorization) string {
	if a == nil {
		return ""
	}
	info, err := auth.ReadCertInfo(a.Cert)
	if err != nil {
		return ""
	}
	return info.Subject
}

// remember records an accepted request's nonce and forgets old ones.
func remember(nonces map[string]time.Time, a *contract.Authorization, now time.Time) {
	if a == nil {
		return
	}
	for n, at := range nonces {
		if now.Sub(at) > 2*auth.DefaultMaxSkew+time.Minute {
			delete(nonces, n)
		}
	}
	if len(nonces) >= maxNoncesKept {
		oldest, first := "", time.Time{}
		for n, at := range nonces {
			if first.IsZero() || at.Before(first) || (at.Equal(first) && n < oldest) {
				oldest, first = n, at
			}
		}
		delete(nonces, oldest)
	}
	nonces[a.Nonce] = now
}

// loadTrust reads the worker's trust for this run. A failed read closes
// the run to signed signals until the next read succeeds: an empty trust
// verifies nothing, and its refresh flag makes the loop try again.
func (p *pool) loadTrust(ctx workflow.Context) {
	if err := p.auth.load(ctx); err != nil {
		p.reject(ctx, "trust", err)
		p.auth = authority{trust: &auth.Trust{}, refresh: true}
	}
}

// readGate reads the cluster's gate from its workflow.
func (p *pool) readGate(ctx workflow.Context) {
	p.gateDirty = false
	var g contract.ClusterGate
	err := workflow.ExecuteActivity(p.platformCtx(ctx, quickActivity, "read cluster gate"), a.ReadClusterGate, p.spec.Key.Cluster).Get(ctx, &g)
	if err != nil {
		p.reject(ctx, "cluster-gate", err)
		return
	}
	p.apply(ctx, poolcore.GateChanged{Gate: g})
}

// loadTrust is the cluster's: as the pool's, closed until a read succeeds.
func (c *cluster) loadTrust(ctx workflow.Context) {
	if err := c.auth.load(ctx); err != nil {
		c.rejectSignal(ctx, fmt.Errorf("trust: %w", err))
		c.auth = authority{trust: &auth.Trust{}, refresh: true}
	}
}
