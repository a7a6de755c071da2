package auth

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
)

// SignSystem signs a trusted input (body, the message's JSON) sent as
// message to workflowID at time at, with a worker's system key.
func SignSystem(key SigningKey, workflowID, message string, body []byte, at time.Time) (contract.SystemSignature, error) {
	if err := checkKid(key.Kid); err != nil {
		return contract.SystemSignature{}, fmt.Errorf("system key: %w", err)
	}
	if len(key.Private) != ed25519.PrivateKeySize {
		return contract.SystemSignature{}, errors.New("system key has no private key")
	}
	if workflowID == "" || message == "" {
		return contract.SystemSignature{}, errors.New("sign: workflow ID and message name are required")
	}
	s := contract.SystemSignature{Key: key.Kid, At: at.UTC()}
	h, err := digest(systemDomain, workflowID, message, body, s.At, "")
	if err != nil {
		return contract.SystemSignature{}, err
	}
	s.Sig = b64.EncodeToString(ed25519.Sign(key.Private, h))
	return s, nil
}

// VerifySystem checks a system signature: the key is a trusted system key,
// At is at most the skew ahead of now and at most MaxSystemAge behind it
// (a signal may wait in history while no worker runs), and the signature
// covers workflowID, message and body. Ordering (refusing an input not
// newer than the last one accepted) is the workflow's, and is what stops a
// replay of an old signed input.
func VerifySystem(trust Trust, s contract.SystemSignature, workflowID, message string, body []byte, now time.Time) error {
	pub, err := trust.key("system", trust.System, s.Key)
	if err != nil {
		return err
	}
	if err := checkTime("system signature", s.At, now, trust.skew(), trust.systemAge()); err != nil {
		return err
	}
	sig, err := b64.DecodeString(s.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("system sig is not a base64url Ed25519 signature")
	}
	h, err := digest(systemDomain, workflowID, message, body, s.At, "")
	if err != nil {
		return err
	}
	if !ed25519.Verify(pub, h, sig) {
		return fmt.Errorf("system signature by %q does not cover this input (other workflow, message or body, or tampered)", s.Key)
	}
	return nil
}

// SignSystemValue marshals v (an observation or watcher report) and signs
// it (SignSystem).
func SignSystemValue(key SigningKey, workflowID, message string, v any, at time.Time) (contract.SystemSignature, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return contract.SystemSignature{}, fmt.Errorf("sign: encode %s: %w", message, err)
	}
	return SignSystem(key, workflowID, message, body, at)
}

// FromWorkflow names a message as sent by the workflow senderID, for
// trusted inputs one workflow sends another (the cluster workflow's
// cluster-gate to its pools): sign and verify with this name, and the
// receiver knows which workflow vouched for it, not only that a worker did.
func FromWorkflow(message, senderID string) string { return message + " from " + senderID }
