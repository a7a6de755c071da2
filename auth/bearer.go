package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
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

// bearerRefresh is how long before expiry a cached bearer token is replaced.
const bearerRefresh = time.Minute

// BearerHeaders puts a fresh proof-of-possession token on every gRPC call:
// it is a Temporal SDK client.HeadersProvider (and fits the UI server's
// metadata hook), minting a new token shortly before the cached one expires.
type BearerHeaders struct {
	cred Credential
	now  func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// NewBearerHeaders makes a header source for cred.
func NewBearerHeaders(cred Credential) *BearerHeaders {
	return &BearerHeaders{cred: cred, now: time.Now}
}

// Credential is the credential the tokens are minted from.
func (b *BearerHeaders) Credential() Credential { return b.cred }

// Header returns the "authorization" header value, "Bearer <token>".
func (b *BearerHeaders) Header() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.token == "" || !now.Add(bearerRefresh).Before(b.expires) {
		tok, err := BearerToken(b.cred, now, MaxBearerTTL)
		if err != nil {
			return "", err
		}
		b.token, b.expires = tok, now.Add(MaxBearerTTL)
	}
	return BearerScheme + b.token, nil
}

// GetHeaders implements the Temporal SDK's client.HeadersProvider.
func (b *BearerHeaders) GetHeaders(context.Context) (map[string]string, error) {
	h, err := b.Header()
	if err != nil {
		return nil, err
	}
	return map[string]string{"authorization": h}, nil
}
