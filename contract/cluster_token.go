package contract

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Enrollment tokens and signed observed reports.
//
// Threat model. Anyone with read access to the namespace (the Web UI,
// `temporal workflow show`, exported histories) reads everything a cluster
// workflow holds: its input, updates' arguments and results, its state.
// So history must hold nothing that lets a reader speak for a cluster:
//   - The token (TokenPrefix + 256 random bits) stays with whoever minted it
//     and with the cluster's agent. The workflow holds its SHA-256 (a
//     fingerprint that names it) and an Ed25519 public key derived from it.
//   - The agent signs each report with the private key derived from the
//     token (seed = SHA-256 of the token under a domain label). Reading the
//     public key, the hash or any signed report does not let anyone sign a
//     new one: that needs the token.
//   - A captured report cannot be replayed: it is refused unless its
//     reportedAt is within MaxReportSkew of the workflow's clock and later
//     than the last accepted report. The signature covers every field, so
//     none can be altered.
//   - Refusal happens in the update's validator, before the update is
//     accepted, so a refused report never enters history.
//   - Rotation (`rotate-token`) sends only the new hash and public key;
//     the old key stops verifying at once. Rotating and setting the phase
//     need write access to the namespace, which is the operator's trust
//     boundary (such a caller could as well terminate the workflow).
//   - A stolen token lets its holder report false observed state until it
//     is rotated. That can only make pools more careful: an agent's report
//     can freeze scale-down (not connected) but cannot unfreeze a cluster
//     the watcher cannot reach.

// TokenPrefix marks Visor enrollment tokens so a leaked one is recognisable.
const TokenPrefix = "vfe1."

// MaxReportSkew bounds how far a report's reportedAt may be from the
// workflow's clock.
const MaxReportSkew = 5 * time.Minute

const (
	reportKeyDomain = "visor-fleet/report-key/v1\x00"
	reportDomain    = "visor-fleet/observed-report/v1\n"
	tokenBytes      = 32
)

// EnrollmentToken is a freshly minted token with what verifies it. Only
// Hash and ReportKey may be stored or sent to Temporal.
type EnrollmentToken struct {
	Token     string
	Hash      string
	ReportKey string
}

// MintEnrollmentToken makes a token from 256 random bits.
func MintEnrollmentToken() (EnrollmentToken, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return EnrollmentToken{}, fmt.Errorf("mint enrollment token: %w", err)
	}
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	hash, key, err := TokenCredentials(token)
	return EnrollmentToken{Token: token, Hash: hash, ReportKey: key}, err
}

// TokenCredentials derives what the workflow stores from a token: its
// SHA-256 (hex) and the Ed25519 public key that verifies its reports
// (base64url). A malformed token is refused without echoing it.
func TokenCredentials(token string) (hash, reportKey string, err error) {
	if err := checkTokenFormat(token); err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(token))
	pub := signingKey(token).Public().(ed25519.PublicKey)
	return hex.EncodeToString(sum[:]), base64.RawURLEncoding.EncodeToString(pub), nil
}

// TokenFingerprint is the short name of a token hash shown to operators.
func TokenFingerprint(hash string) string {
	if len(hash) < 12 {
		return ""
	}
	return "sha256:" + hash[:12]
}

func checkTokenFormat(token string) error {
	body, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok {
		return fmt.Errorf("enrollment token does not start with %q", TokenPrefix)
	}
	b, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(b) != tokenBytes {
		return fmt.Errorf("enrollment token is not %s followed by %d base64url-encoded random bytes", TokenPrefix, tokenBytes)
	}
	return nil
}

func signingKey(token string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(reportKeyDomain + token))
	return ed25519.NewKeyFromSeed(seed[:])
}

// SignObservedReport signs r with the key derived from token.
func SignObservedReport(token string, r ObservedReport) (ObservedReport, error) {
	if err := checkTokenFormat(token); err != nil {
		return r, err
	}
	r.Signature = base64.RawURLEncoding.EncodeToString(ed25519.Sign(signingKey(token), r.signedBytes()))
	return r, nil
}

// VerifySignature checks r's signature against a stored report key.
func (r ObservedReport) VerifySignature(reportKey string) error {
	pub, err := DecodeReportKey(reportKey)
	if err != nil {
		return err
	}
	sig, err := base64.RawURLEncoding.DecodeString(r.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return errors.New("signature is not a base64url Ed25519 signature")
	}
	if !ed25519.Verify(pub, r.signedBytes(), sig) {
		return errors.New("signature does not verify with the cluster's enrollment token: wrong, revoked or tampered")
	}
	return nil
}

// DecodeReportKey parses a stored report key.
func DecodeReportKey(reportKey string) (ed25519.PublicKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(reportKey)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("reportKey is not a base64url Ed25519 public key")
	}
	return ed25519.PublicKey(b), nil
}

// signedBytes is the canonical form the signature covers. JSON escapes the
// strings, so no field can spill into another; the time is fixed to UTC
// nanoseconds so a round trip through Temporal's converter keeps it.
func (r ObservedReport) signedBytes() []byte {
	canonical := struct {
		ClusterID    string       `json:"c"`
		ReportedAt   string       `json:"t"`
		SyncState    SyncState    `json:"s"`
		Capabilities Capabilities `json:"k"`
		AgentVersion string       `json:"v"`
		Nodes        int          `json:"n"`
		Pools        int          `json:"p"`
	}{r.ClusterID, r.ReportedAt.UTC().Format(time.RFC3339Nano), r.SyncState, r.Capabilities, r.AgentVersion, r.Nodes, r.Pools}
	b, err := json.Marshal(canonical)
	if err != nil {
		panic(err) // strings, ints and bools always marshal
	}
	return append([]byte(reportDomain), b...)
}
