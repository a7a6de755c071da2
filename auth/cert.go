package auth

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/visor-fleet/types"
)

// AllOrgs in a certificate's orgs lets its holder act for every org
// (platform admins and the system's own worker).
const AllOrgs = "*"

// ReadOnly as a certificate's only org makes its holder act for no org: a
// reader (the Web UI's own credential). It is no DNS label, so no pool's
// org can equal it, and a request it signs moves nothing.
const ReadOnly = "-"

// Bounds on what a certificate may claim.
const (
	maxSubjectLen = 256
	maxOrgs       = 256
	// MaxCertTTL bounds a certificate's life.
	MaxCertTTL = 5 * 366 * 24 * time.Hour
)

// Caller is a verified identity.
type Caller struct {
	Subject string
	Orgs    []string
}

// MayActFor reports whether the caller may act for org.
func (c Caller) MayActFor(org string) bool {
	return org != "" && (slices.Contains(c.Orgs, AllOrgs) || slices.Contains(c.Orgs, org))
}

// IsPlatform reports whether the caller acts for every org (platform
// admins and the system's own worker), as cluster-wide requests need.
func (c Caller) IsPlatform() bool { return slices.Contains(c.Orgs, AllOrgs) }

// IsReader reports whether the caller acts for no org (ReadOnly).
func (c Caller) IsReader() bool { return len(c.Orgs) == 1 && c.Orgs[0] == ReadOnly }

// certClaims are a certificate's claims; cnf is the caller's public key.
type certClaims struct {
	Sub  string   `json:"sub"`
	Orgs []string `json:"orgs"`
	Cnf  string   `json:"cnf"`
	Iat  int64    `json:"iat"`
	Exp  int64    `json:"exp"`
	Kid  string   `json:"kid"`
}

// CertInfo is what a certificate says, read without verifying it (for
// display); Verify is what decides.
type CertInfo struct {
	Subject  string
	Orgs     []string
	Kid      string
	IssuedAt time.Time
	Expires  time.Time
}

// IssueCert signs a certificate for the holder of callerPub, valid for ttl
// from now, acting for orgs ("*" for every org).
func IssueCert(issuer SigningKey, subject string, orgs []string, callerPub ed25519.PublicKey, ttl time.Duration, now time.Time) (string, error) {
	if err := checkKid(issuer.Kid); err != nil {
		return "", fmt.Errorf("issuer: %w", err)
	}
	if len(issuer.Private) != ed25519.PrivateKeySize {
		return "", errors.New("issuer has no private key")
	}
	if len(callerPub) != ed25519.PublicKeySize {
		return "", errors.New("caller public key is not an Ed25519 public key")
	}
	if ttl <= 0 || ttl > MaxCertTTL {
		return "", fmt.Errorf("ttl %s must be positive and at most %s", ttl, MaxCertTTL)
	}
	c := certClaims{Sub: subject, Orgs: orgs, Cnf: EncodePublicKey(callerPub), Iat: now.Unix(), Exp: now.Add(ttl).Unix(), Kid: issuer.Kid}
	if err := c.checkIdentity(); err != nil {
		return "", err
	}
	return signJWT(issuer.Private, jwtHeader{Alg: algEdDSA, Typ: typCert, Kid: issuer.Kid}, c)
}

// checkIdentity bounds the subject and orgs.
func (c certClaims) checkIdentity() error {
	if c.Sub == "" {
		return errors.New("certificate subject is empty")
	}
	if len(c.Sub) > maxSubjectLen || strings.IndexFunc(c.Sub, isControl) >= 0 {
		return fmt.Errorf("certificate subject must be at most %d printable characters", maxSubjectLen)
	}
	if len(c.Orgs) == 0 {
		return errors.New("certificate orgs is empty; a caller must act for at least one org")
	}
	if len(c.Orgs) > maxOrgs {
		return fmt.Errorf("certificate names %d orgs, more than %d", len(c.Orgs), maxOrgs)
	}
	for i, org := range c.Orgs {
		if org == AllOrgs || (org == ReadOnly && len(c.Orgs) == 1) {
			continue
		}
		if err := types.ValidateDNSLabel(fmt.Sprintf("certificate orgs[%d]", i), org); err != nil {
			return err
		}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }

// verifyCert checks a certificate against trust at now and returns its
// claims and the caller's public key.
func verifyCert(trust Trust, cert string, now time.Time) (certClaims, ed25519.PublicKey, error) {
	var c certClaims
	p, err := parseJWT("certificate", cert, typCert)
	if err != nil {
		return c, nil, err
	}
	issuerKey, err := trust.key("certificate issuer", trust.Issuers, p.header.Kid)
	if err != nil {
		return c, nil, err
	}
	if !p.verify(issuerKey) {
		return c, nil, fmt.Errorf("certificate signature does not verify with issuer %q: forged or tampered", p.header.Kid)
	}
	if err := strictUnmarshal(p.claims, &c); err != nil {
		return c, nil, fmt.Errorf("certificate claims: %w", err)
	}
	if c.Kid != p.header.Kid {
		return c, nil, fmt.Errorf("certificate claims kid %q but its header says %q", c.Kid, p.header.Kid)
	}
	if err := c.checkIdentity(); err != nil {
		return c, nil, err
	}
	pub, err := DecodePublicKey(c.Cnf)
	if err != nil {
		return c, nil, fmt.Errorf("certificate cnf: %w", err)
	}
	if err := checkValidity("certificate", c.Iat, c.Exp, trust.skew(), now); err != nil {
		return c, nil, err
	}
	return c, pub, nil
}

// checkValidity checks a token's iat/exp (Unix seconds) at now.
func checkValidity(what string, iat, exp int64, skew time.Duration, now time.Time) error {
	if iat < 0 {
		return fmt.Errorf("%s iat %d is before 1970", what, iat)
	}
	issued, expires := time.Unix(iat, 0), time.Unix(exp, 0)
	if exp <= iat {
		return fmt.Errorf("%s expires (%d) before it is issued (%d)", what, exp, iat)
	}
	if issued.After(now.Add(skew)) {
		return fmt.Errorf("%s is issued at %s, in the future", what, issued.UTC().Format(time.RFC3339))
	}
	if !now.Before(expires) {
		return fmt.Errorf("%s expired at %s", what, expires.UTC().Format(time.RFC3339))
	}
	return nil
}

// ReadCertInfo decodes a certificate without verifying it.
func ReadCertInfo(cert string) (CertInfo, error) {
	p, err := parseJWT("certificate", cert, typCert)
	if err != nil {
		return CertInfo{}, err
	}
	var c certClaims
	if err := strictUnmarshal(p.claims, &c); err != nil {
		return CertInfo{}, fmt.Errorf("certificate claims: %w", err)
	}
	return CertInfo{Subject: c.Sub, Orgs: c.Orgs, Kid: c.Kid, IssuedAt: time.Unix(c.Iat, 0).UTC(), Expires: time.Unix(c.Exp, 0).UTC()}, nil
}
