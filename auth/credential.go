package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Credential is what a caller holds: its private key and the certificate
// the issuer signed for it. It is a secret; pass it around by reference
// (file:/path or env:NAME), never as a workflow or activity argument.
type Credential struct {
	Key  ed25519.PrivateKey
	Cert string
}

// credentialFile is the JSON file form. Subject and orgs are copies of the
// certificate's, for a reader of the file; the certificate decides.
type credentialFile struct {
	Subject    string   `json:"subject"`
	Orgs       []string `json:"orgs"`
	Expires    string   `json:"expires"`
	PrivateKey string   `json:"privateKey"`
	Cert       string   `json:"cert"`
}

// NewCredential makes a caller key and has issuer certify it.
func NewCredential(issuer SigningKey, subject string, orgs []string, ttl time.Duration, now time.Time) (Credential, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Credential{}, fmt.Errorf("generate caller key: %w", err)
	}
	cert, err := IssueCert(issuer, subject, orgs, pub, ttl, now)
	if err != nil {
		return Credential{}, err
	}
	return Credential{Key: priv, Cert: cert}, nil
}

// Info is what the credential's certificate says (not verified).
func (c Credential) Info() (CertInfo, error) { return ReadCertInfo(c.Cert) }

// check makes sure the key is the one the certificate names.
func (c Credential) check() error {
	if len(c.Key) != ed25519.PrivateKeySize {
		return errors.New("credential has no private key")
	}
	p, err := parseJWT("credential certificate", c.Cert, typCert)
	if err != nil {
		return err
	}
	var claims certClaims
	if err := strictUnmarshal(p.claims, &claims); err != nil {
		return fmt.Errorf("credential certificate claims: %w", err)
	}
	if claims.Cnf != EncodePublicKey(c.Key.Public().(ed25519.PublicKey)) {
		return errors.New("credential privateKey is not the key its certificate names (cnf)")
	}
	return nil
}

// MarshalJSON writes the credential file form.
func (c Credential) MarshalJSON() ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	info, err := c.Info()
	if err != nil {
		return nil, err
	}
	return json.Marshal(credentialFile{Subject: info.Subject, Orgs: info.Orgs, Expires: info.Expires.Format(time.RFC3339),
		PrivateKey: EncodePrivateKey(c.Key), Cert: c.Cert})
}

// UnmarshalJSON reads the credential file form and checks the key matches
// the certificate.
func (c *Credential) UnmarshalJSON(b []byte) error {
	var f credentialFile
	if err := strictUnmarshal(b, &f); err != nil {
		return fmt.Errorf("credential: %w", err)
	}
	key, err := DecodePrivateKey(f.PrivateKey)
	if err != nil {
		return fmt.Errorf("credential privateKey: %w", err)
	}
	got := Credential{Key: key, Cert: f.Cert}
	if err := got.check(); err != nil {
		return err
	}
	*c = got
	return nil
}

// SaveCredential writes c to path, readable by its owner only.
func SaveCredential(path string, c Credential) error { return savePrivateJSON(path, c) }

// LoadCredential reads a credential from a reference (file:/path or
// env:NAME holding the JSON).
func LoadCredential(ref string) (Credential, error) { return loadJSON[Credential](ref) }

// VerifyCredential checks that cred's key matches its certificate and the
// certificate is trusted and valid at now (say, before relying on a file).
func VerifyCredential(trust Trust, cred Credential, now time.Time) (Caller, error) {
	if err := cred.check(); err != nil {
		return Caller{}, err
	}
	claims, _, err := verifyCert(trust, cred.Cert, now)
	if err != nil {
		return Caller{}, err
	}
	return Caller{Subject: claims.Sub, Orgs: claims.Orgs}, nil
}
