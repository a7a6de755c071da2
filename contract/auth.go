package contract

import (
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// Authorization is a caller's signed request envelope (package auth makes
// and checks it). Nothing in it is a secret: the certificate names the
// caller and its public key, and the signature covers the target workflow,
// the message name, the request body (without this field), At and Nonce, so
// a reader of history can neither forge one nor reuse one elsewhere. The
// workflow refuses an At far from its clock and a Nonce it has seen.
type Authorization struct {
	Cert  string    `json:"cert"`
	At    time.Time `json:"at"`
	Nonce string    `json:"nonce"`
	Sig   string    `json:"sig"`
}

// SystemSignature marks a trusted input; see types.SystemSignature.
type SystemSignature = types.SystemSignature

// SetPolicyRequest is the `set-policy` update's payload: the policy's fields
// at the top level (so a bare types.Policy payload still decodes) plus the
// caller's Authorization.
type SetPolicyRequest struct {
	types.Policy
	Auth *Authorization `json:"auth,omitempty"`
}
