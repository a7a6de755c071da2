// Package conformance is the one table of behaviours every connector must
// show against its test double: provisioning twice with one idempotency key
// yields one set of machines, an answer lost after the provider applied the
// change is found by list, quota, capacity and auth failures are typed
// (errclass), nodes are deleted by name and by ID, a group is deleted with
// its machines, the credential never appears in an error or a log, and the
// catalog's rows are usable. Each connector's own tests call Run with a
// constructor of its double (moto_server, vcsim, an HTTP fake, an SDK fake
// server, the sim), so a new connector proves the contract by writing one
// Double and nothing else.
package conformance

import (
	"context"
	"testing"

	"github.com/hanzoai/visor-fleet/connectors"
)

// Failure is a refusal every provider has its own words for.
type Failure string

const (
	// Quota: the account's limit (instances, cores) is reached. Permanent:
	// retrying cannot help until someone raises it.
	Quota Failure = "quota"
	// Capacity: the size is out of stock where the group lives.
	// InsufficientCapacity: sizing falls back to the next size.
	Capacity Failure = "capacity"
	// Auth: the credential is refused. Permanent, and the error names the
	// credential reference, never the secret.
	Auth Failure = "auth"
)

// Failures are the refusals every connector types, in the order Run tries them.
var Failures = []Failure{Quota, Capacity, Auth}

// Double is one connector wired to a fresh test double. Run asks for a new
// one for every behaviour; doubles that share a server between calls (one
// moto_server, one vcsim) keep apart by giving each a pool of its own.
type Double struct {
	// Provider is the connector under test, built by its package's New from
	// Credential as a worker builds it. Run calls it through
	// connectors.Checked, as workers do.
	Provider connectors.Provider
	// Spec asks for a group of a pool no other group on the double belongs
	// to; Size must be a row of the provider's catalog. Run sets TargetSize.
	Spec connectors.NodeGroupSpec
	// Credential is the reference the provider was built from and Secret
	// the value behind it; both empty for a provider that takes none.
	Credential connectors.CredentialRef
	Secret     string
	// Rebuild builds the connector again, against the same double, from
	// another credential reference, as its package's New does; nil for a
	// provider that takes no credential.
	Rebuild func(ctx context.Context, ref connectors.CredentialRef) (connectors.Provider, error)
	// WrongSecret is a credential of the right form that the double
	// refuses; empty when the double accepts any (moto_server does).
	WrongSecret string
	// Machines counts the live (not deleting) machines the double holds for
	// Spec.Pool, read from the double itself, never through the provider.
	Machines func(t *testing.T) int
	// LoseAnswer makes the double apply the next request that launches
	// machines and then answer it with a failure (a 5xx, a dropped
	// connection), so the connector never sees the answer.
	LoseAnswer func(t *testing.T)
	// Refuse makes the double refuse the next request that launches
	// machines the way its provider refuses for f, applying nothing. It
	// returns why the double cannot model f (a provider without a
	// credential cannot refuse one), or "" when it can.
	Refuse func(t *testing.T, f Failure) (notModelled string)
	// Logs, when set, returns what the connector and its SDK logged on
	// their own writers; Run captures slog's default and the log package's
	// output itself.
	Logs func() string
}
