// Package auth says who is asking and whether to believe it. It is pure Go
// (no Temporal, no I/O in verification, no clocks: every check takes now),
// so workflow code can verify deterministically with public keys only.
//
// Keys are Ed25519. A platform issuer signs caller certificates: compact
// JWTs ("typ":"visor-cert") naming the subject, the orgs it may act for
// ("*" is every org) and the caller's own public key (cnf). A caller holds
// a Credential (its private key and certificate) and signs each mutating
// request: the signature binds the target workflow, the message name, the
// canonical request body, a time and a nonce (contract.Authorization). None
// of that is secret, so it may sit in history: a reader cannot forge a new
// one or move an old one to another workflow, message or body; the workflow
// refuses stale times and repeated nonces.
//
// Trusted inputs (the watcher's observe and watcher-report) carry a system
// signature (contract.SystemSignature) by a key only workers hold.
//
// Towards the Temporal frontend a caller sends a short-lived bearer token
// (BearerToken): a proof-of-possession JWT signed by the caller's key that
// carries its certificate, checked by the server's ClaimMapper.
package auth
