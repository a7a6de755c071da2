package codecauth

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/server/common/log"

	"github.com/hanzoai/visor-fleet/auth"
)

// The deployed codec server decodes only for a caller who may read the
// namespace: the Web UI user's OIDC token (checked by Temporal's JWT claim
// mapper against a JWKS served on loopback, as an IdP serves one) with
// read on it, or a platform or reader Visor token; a tenant's Visor token,
// a user of another namespace, a token of another key and none at all are
// refused with the reason.
func TestCodecServerDecodesOnlyForReadersOfTheNamespace(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rogue, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b64 := base64.RawURLEncoding.EncodeToString
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": "idp-1", "use": "sig", "alg": "RS256",
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	defer jwks.Close()
	mint := func(k *rsa.PrivateKey, sub string, perms ...string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": sub, "permissions": perms, "exp": time.Now().Add(time.Hour).Unix()})
		tok.Header["kid"] = "idp-1"
		s, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + s
	}
	now := time.Now()
	issuer, err := auth.GenerateIssuer("dev")
	if err != nil {
		t.Fatal(err)
	}
	trust := auth.Trust{Issuers: map[string]string{"dev": issuer.Public()}}
	bearer := func(orgs ...string) string {
		cred, err := auth.NewCredential(issuer, "caller", orgs, time.Hour, now)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := auth.BearerToken(cred, now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return "Bearer " + tok
	}
	c := Checker{Trust: &trust, OIDC: NewOIDC([]string{jwks.URL}, "", time.Minute, log.NewNoopLogger())}
	check := func(token, ns string) error {
		r := httptest.NewRequest(http.MethodPost, "/decode", nil)
		if token != "" {
			r.Header.Set("Authorization", token)
		}
		r.Header.Set("X-Namespace", ns)
		return c.Authorize(r)
	}
	// The key provider loads the JWKS in the background.
	reader := mint(key, "ops@example.com", "visor:read")
	for deadline := time.Now().Add(10 * time.Second); check(reader, "visor") != nil && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	for _, cs := range []struct {
		what, token, ns, says string
	}{
		{"a UI user who may read the namespace", reader, "visor", ""},
		{"a UI user with write on it", mint(key, "dev@example.com", "visor:write"), "visor", ""},
		{"a platform Visor token", bearer(auth.AllOrgs), "visor", ""},
		{"the UI's reader Visor token", bearer(auth.ReadOnly), "visor", ""},
		{"a UI user of another namespace", reader, "other", `may not read namespace "other"`},
		{"a tenant's Visor token", bearer("acme"), "visor", "decodes for platform operators and readers"},
		{"a token signed by another key", mint(rogue, "mallory", "visor:admin"), "visor", "not a valid OIDC access token"},
		{"no token", "", "visor", "no Authorization header"},
	} {
		err := check(cs.token, cs.ns)
		if cs.says == "" && err != nil {
			t.Errorf("%s: refused: %v", cs.what, err)
		}
		if cs.says != "" && (err == nil || !strings.Contains(err.Error(), cs.says)) {
			t.Errorf("%s: err = %v, want a refusal saying %q", cs.what, err, cs.says)
		}
	}
}
