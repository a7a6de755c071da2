package starter

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
)

// credentials maps a client to the caller credential it signs with. The
// SDK's worker needs the client exactly as client.Dial made it, so the
// credential cannot ride on a wrapper. One small entry per client dialled
// with a credential; it is dropped by Forget (Dial's clients never are,
// they live as long as the process).
var credentials sync.Map // client.Client -> auth.Credential

// WithCredential makes every mutating request this package sends through c
// signed with cred, and returns c. Dial does this when ConnectOptions names
// a credential; use it for a client built elsewhere.
func WithCredential(c client.Client, cred auth.Credential) client.Client {
	credentials.Store(c, cred)
	return c
}

// Forget stops signing for c (say, before closing a short-lived client).
func Forget(c client.Client) { credentials.Delete(c) }

// credentialOf returns the credential c signs with, if any.
func credentialOf(c client.Client) (auth.Credential, bool) {
	if c == nil {
		return auth.Credential{}, false
	}
	v, ok := credentials.Load(c)
	if !ok {
		return auth.Credential{}, false
	}
	return v.(auth.Credential), true
}

// tenantOrgs are the orgs c's credential is limited to; nil for a
// platform credential (every org) or none.
func tenantOrgs(c client.Client) []string {
	cred, ok := credentialOf(c)
	if !ok {
		return nil
	}
	info, err := cred.Info()
	if err != nil || slices.Contains(info.Orgs, auth.AllOrgs) {
		return nil
	}
	return info.Orgs
}

// authorize signs req (its JSON, without the auth field) as message to
// workflowID when c holds a credential; without one it returns nil and the
// workflow decides whether an unsigned request is allowed. requestedBy, if
// not nil and empty, is filled with the credential's subject for display;
// the workflow records the verified subject either way.
func authorize(c client.Client, workflowID, message string, req any, requestedBy *string) (*contract.Authorization, error) {
	cred, ok := credentialOf(c)
	if !ok {
		return nil, nil
	}
	if requestedBy != nil && *requestedBy == "" {
		if info, err := cred.Info(); err == nil {
			*requestedBy = info.Subject
		}
	}
	a, err := auth.SignRequest(cred, workflowID, message, req, time.Now())
	if err != nil {
		return nil, fmt.Errorf("sign %s for %s: %w", message, workflowID, err)
	}
	return &a, nil
}
