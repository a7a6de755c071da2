package types

import "time"

// SystemSignature marks a trusted input (the watcher's `observe` and
// `watcher-report`): an Ed25519 signature, by a key only workers hold, over
// the target workflow, the message name, the payload without its "auth"
// field, and At (package auth makes and checks it). Key names the system
// key (its kid). It lives here so observations, which are types, can carry
// it; contract.SystemSignature is the same type.
type SystemSignature struct {
	Key string    `json:"key"`
	At  time.Time `json:"at"`
	Sig string    `json:"sig"`
}
