package starter

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/hanzoai/visor-fleet/auth"
	"github.com/hanzoai/visor-fleet/contract"
)

// signingClient is a client that also holds its caller's credential, so
// the operations in this package sign each request with it.
type signingClient struct {
	client.Client
	cred auth.Credential
}

// WithCredential returns c signing every mutating request this package
// sends through it with cred. Dial does this when ConnectOptions names a
// credential; use it for a client built elsewhere.
func WithCredential(c client.Client, cred auth.Credential) client.Client {
	return signingClient{Client: c, cred: cred}
}

// credentialOf returns the credential c signs with, if any.
func credentialOf(c client.Client) (auth.Credential, bool) {
	sc, ok := c.(signingClient)
	return sc.cred, ok
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
