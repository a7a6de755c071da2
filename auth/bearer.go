package auth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// MaxBearerTTL bounds a bearer token's life: a captured one is soon useless.
const MaxBearerTTL = 5 * time.Minute

// BearerScheme prefixes the token in the gRPC "authorization" header.
const BearerScheme = "Bearer "

// bearerClaims: the certificate and a fresh id, signed by the caller's key.
type bearerClaims struct {
	Cert string `json:"cert"`
	Iat  int64  `json:"iat"`
	Exp  int64  `json:"exp"`
	Jti  string `json:"jti"`
}

// BearerToken makes a proof-of-possession token for the Temporal frontend,
// valid for ttl (at most MaxBearerTTL) from now.
func BearerToken(cred Credential, now time.Time, ttl time.Duration) (string, error) {
	if err := cred.check(); err != nil {
		return "", err
	}
	if ttl <= 0 || ttl > MaxBearerTTL {
		return "", fmt.Errorf("bearer ttl %s must be positive and at most %s", ttl, MaxBearerTTL)
	}
	raw := make([]byte, nonceBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("bearer token id: %w", err)
	}
	c := bearerClaims{Cert: cred.Cert, Iat: now.Unix(), Exp: now.Add(ttl).Unix(), Jti: b64.EncodeToString(raw)}
	return signJWT(cred.Key, jwtHeader{Alg: algEdDSA, Typ: typBearer}, c)
}

// VerifyBearer checks a bearer token (with or without the "Bearer "
// prefix): its certificate is trusted and valid, the token is signed by the
// certificate's key, and it is current and short-lived.
func VerifyBearer(trust Trust, token string, now time.Time) (Caller, error) {
	if len(token) > len(BearerScheme) && token[:len(BearerScheme)] == BearerScheme {
		token = token[len(BearerScheme):]
	}
	p, err := parseJWT("bearer token", token, typBearer)
	if err != nil {
		return Caller{}, err
	}
	var c bearerClaims
	if err := strictUnmarshal(p.claims, &c); err != nil {
		return Caller{}, fmt.Errorf("bearer token claims: %w", err)
	}
	cert, pub, err := verifyCert(trust, c.Cert, now)
	if err != nil {
		return Caller{}, err
	}
	if !p.verify(pub) {
		return Caller{}, fmt.Errorf("bearer token is not signed by the key of %q's certificate", cert.Sub)
	}
	if err := checkValidity("bearer token", c.Iat, c.Exp, trust.skew(), now); err != nil {
		return Caller{}, err
	}
	if c.Exp-c.Iat > int64(MaxBearerTTL/time.Second) { // iat >= 0 < exp: no overflow
		return Caller{}, fmt.Errorf("bearer token lives %ds, longer than %s", c.Exp-c.Iat, MaxBearerTTL)
	}
	if len(c.Jti) < minNonceLen {
		return Caller{}, errors.New("bearer token jti is missing or short")
	}
	return Caller{Subject: cert.Sub, Orgs: cert.Orgs}, nil
}
