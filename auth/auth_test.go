package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

const (
	poolID = "pool/acme/shop/api/sim/sim-east"
	msg    = contract.UpdateScale
)

type fixture struct {
	issuer SigningKey
	system SigningKey
	trust  Trust
	acme   Credential
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	issuer, err := GenerateIssuer("issuer-1")
	require.NoError(t, err)
	system, err := GenerateSystemKey("system-1")
	require.NoError(t, err)
	acme, err := NewCredential(issuer, "alice@acme", []string{"acme"}, time.Hour, t0)
	require.NoError(t, err)
	trust := Trust{Issuers: map[string]string{issuer.Kid: issuer.Public()}, System: map[string]string{system.Kid: system.Public()}}
	require.NoError(t, trust.Validate())
	return fixture{issuer: issuer, system: system, trust: trust, acme: acme}
}

func scaleBody(t testing.TB, target int) []byte {
	b, err := json.Marshal(contract.ScaleRequest{Target: target, Reason: "launch"})
	require.NoError(t, err)
	return b
}

func TestSignVerifyRoundTrip(t *testing.T) {
	f := newFixture(t)
	body := scaleBody(t, 4)
	a, err := Sign(f.acme, poolID, msg, body, t0)
	require.NoError(t, err)

	caller, err := Verify(f.trust, a, poolID, msg, body, t0.Add(30*time.Second))
	require.NoError(t, err)
	require.Equal(t, "alice@acme", caller.Subject)
	require.Equal(t, []string{"acme"}, caller.Orgs)
	require.True(t, caller.MayActFor("acme"))
	require.False(t, caller.MayActFor("globex"))
	require.False(t, caller.MayActFor(""))
	require.False(t, caller.IsPlatform())
}

func TestVerifyAcceptsTheRequestAsItTravels(t *testing.T) {
	// The starter puts the envelope into the request it signed; the workflow
	// hands Verify the payload as received (auth field included, any field
	// order, through Temporal's JSON and back).
	f := newFixture(t)
	req := contract.ScaleRequest{Target: 4, Reason: "launch <&>", RequestedBy: "alice"}
	a, err := SignRequest(f.acme, poolID, msg, req, t0)
	require.NoError(t, err)
	req.Auth = &a
	wire, err := json.Marshal(req)
	require.NoError(t, err)

	var got contract.ScaleRequest
	require.NoError(t, json.Unmarshal(wire, &got))
	_, err = Verify(f.trust, *got.Auth, poolID, msg, wire, t0)
	require.NoError(t, err, "raw payload")
	again, err := json.Marshal(got)
	require.NoError(t, err)
	_, err = Verify(f.trust, *got.Auth, poolID, msg, again, t0)
	require.NoError(t, err, "decoded and re-encoded payload")
	reordered := []byte(`{"reason":"launch \u003c\u0026\u003e","requestedBy":"alice","target":4}`)
	_, err = Verify(f.trust, *got.Auth, poolID, msg, reordered, t0)
	require.NoError(t, err, "same JSON, other key order and no auth field")
}

func TestSetPolicyRequestEmbedsPolicy(t *testing.T) {
	f := newFixture(t)
	var old contract.SetPolicyRequest
	require.NoError(t, json.Unmarshal([]byte(`{"minNodes":1,"maxNodes":9}`), &old), "a bare policy payload still decodes")
	require.Equal(t, 9, old.MaxNodes)
	require.Nil(t, old.Auth)

	req := contract.SetPolicyRequest{Policy: old.Policy}
	a, err := SignRequest(f.acme, poolID, contract.UpdateSetPolicy, req, t0)
	require.NoError(t, err)
	req.Auth = &a
	wire, err := json.Marshal(req)
	require.NoError(t, err)
	require.Contains(t, string(wire), `"maxNodes":9`, "the policy's fields stay at the top level")
	_, err = Verify(f.trust, a, poolID, contract.UpdateSetPolicy, wire, t0)
	require.NoError(t, err)
}

func TestVerifyRefuses(t *testing.T) {
	f := newFixture(t)
	body := scaleBody(t, 4)
	good, err := Sign(f.acme, poolID, msg, body, t0)
	require.NoError(t, err)

	rogue, err := GenerateIssuer(f.issuer.Kid) // same kid, other key
	require.NoError(t, err)
	forged, err := NewCredential(rogue, "mallory", []string{AllOrgs}, time.Hour, t0)
	require.NoError(t, err)
	forgedAuth, err := Sign(forged, poolID, msg, body, t0)
	require.NoError(t, err)

	other, err := GenerateIssuer("issuer-2")
	require.NoError(t, err)
	unknown, err := NewCredential(other, "bob", []string{"acme"}, time.Hour, t0)
	require.NoError(t, err)
	unknownAuth, err := Sign(unknown, poolID, msg, body, t0)
	require.NoError(t, err)

	expiring, err := NewCredential(f.issuer, "carol", []string{"acme"}, time.Minute, t0.Add(-2*time.Minute))
	require.NoError(t, err)
	expiredAuth, err := Sign(expiring, poolID, msg, body, t0)
	require.NoError(t, err)

	early, err := NewCredential(f.issuer, "dave", []string{"acme"}, time.Hour, t0.Add(time.Hour))
	require.NoError(t, err)
	earlyAuth, err := Sign(early, poolID, msg, body, t0)
	require.NoError(t, err)

	globex, err := NewCredential(f.issuer, "eve@globex", []string{"globex"}, time.Hour, t0)
	require.NoError(t, err)

	bearer, err := BearerToken(f.acme, t0, time.Minute)
	require.NoError(t, err)

	longLived, err := NewCredential(f.issuer, "frank", []string{"acme"}, 2*time.Hour, t0.Add(-time.Hour))
	require.NoError(t, err)
	futureAuth, err := Sign(longLived, poolID, msg, body, t0)
	require.NoError(t, err)

	with := func(change func(*contract.Authorization)) contract.Authorization {
		a := good
		change(&a)
		return a
	}
	cases := []struct {
		name   string
		a      contract.Authorization
		wf     string
		msg    string
		body   []byte
		now    time.Time
		reason string
	}{
		{"no certificate", with(func(a *contract.Authorization) { a.Cert = "" }), poolID, msg, body, t0, "certificate is missing"},
		{"garbage certificate", with(func(a *contract.Authorization) { a.Cert = "not.a.jwt.at-all" }), poolID, msg, body, t0, "not a compact JWT"},
		{"bearer token as certificate", with(func(a *contract.Authorization) { a.Cert = bearer }), poolID, msg, body, t0, `typ "visor-pop"`},
		{"certificate from an untrusted issuer", unknownAuth, poolID, msg, body, t0, `kid "issuer-2" is not trusted`},
		{"certificate forged under a trusted kid", forgedAuth, poolID, msg, body, t0, "certificate signature does not verify"},
		{"certificate claims tampered", with(func(a *contract.Authorization) { a.Cert = tamperClaims(t, a.Cert, `"orgs":["*"]`) }), poolID, msg, body, t0, "certificate signature does not verify"},
		{"expired certificate", expiredAuth, poolID, msg, body, t0, "certificate expired at"},
		{"certificate from the future", earlyAuth, poolID, msg, body, t0, "in the future"},
		{"another caller's certificate", with(func(a *contract.Authorization) { a.Cert = globex.Cert }), poolID, msg, body, t0, "does not cover this request"},
		{"no time", with(func(a *contract.Authorization) { a.At = time.Time{} }), poolID, msg, body, t0, "authorization time is missing"},
		{"signed too long ago", good, poolID, msg, body, t0.Add(DefaultMaxSkew + time.Second), "old (at most 2m0s allowed)"},
		{"signed in the future", futureAuth, poolID, msg, body, t0.Add(-DefaultMaxSkew - time.Second), "ahead of now"},
		{"time tampered", with(func(a *contract.Authorization) { a.At = a.At.Add(time.Nanosecond) }), poolID, msg, body, t0, "does not cover this request"},
		{"no nonce", with(func(a *contract.Authorization) { a.Nonce = "" }), poolID, msg, body, t0, "nonce must be"},
		{"nonce not base64url", with(func(a *contract.Authorization) { a.Nonce = "!!!!!!!!!!!!!!!!!!!!" }), poolID, msg, body, t0, "nonce must be"},
		{"nonce tampered", with(func(a *contract.Authorization) { a.Nonce = "AAAAAAAAAAAAAAAAAAAAAA" }), poolID, msg, body, t0, "does not cover this request"},
		{"no signature", with(func(a *contract.Authorization) { a.Sig = "" }), poolID, msg, body, t0, "sig is not a base64url Ed25519 signature"},
		{"signature flipped", with(func(a *contract.Authorization) { a.Sig = flip(a.Sig) }), poolID, msg, body, t0, "does not cover this request"},
		{"other workflow", good, "pool/globex/shop/api/sim/sim-east", msg, body, t0, "does not cover this request"},
		{"other message", good, poolID, contract.UpdateDeregister, body, t0, "does not cover this request"},
		{"other body", good, poolID, msg, scaleBody(t, 50), t0, "does not cover this request"},
		{"body with an added field", good, poolID, msg, []byte(`{"target":4,"reason":"launch","requestedBy":"","Target":50}`), t0, "does not cover this request"},
		{"body not JSON", good, poolID, msg, []byte(`{"target":`), t0, "request body is not JSON"},
		{"body with trailing data", good, poolID, msg, append(scaleBody(t, 4), []byte(` {}`)...), t0, "data after its JSON value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(f.trust, c.a, c.wf, c.msg, c.body, c.now)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.reason)
		})
	}
}

func TestConfiguredSkew(t *testing.T) {
	f := newFixture(t)
	body := scaleBody(t, 4)
	a, err := Sign(f.acme, poolID, msg, body, t0)
	require.NoError(t, err)
	f.trust.MaxSkew = 10 * 1e9
	_, err = Verify(f.trust, a, poolID, msg, body, t0.Add(9*time.Second))
	require.NoError(t, err)
	_, err = Verify(f.trust, a, poolID, msg, body, t0.Add(11*time.Second))
	require.ErrorContains(t, err, "at most 10s allowed")
}

func TestIssueCertRefusesBadIdentity(t *testing.T) {
	f := newFixture(t)
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	cases := []struct {
		subject string
		orgs    []string
		ttl     time.Duration
		reason  string
	}{
		{"", []string{"acme"}, time.Hour, "subject is empty"},
		{"a\x1b[2Jb", []string{"acme"}, time.Hour, "printable"},
		{strings.Repeat("s", 257), []string{"acme"}, time.Hour, "printable"},
		{"alice", nil, time.Hour, "orgs is empty"},
		{"alice", []string{"Acme"}, time.Hour, "orgs[0]"},
		{"alice", []string{"acme", "a b"}, time.Hour, "orgs[1]"},
		{"alice", []string{"acme"}, 0, "ttl"},
		{"alice", []string{"acme"}, MaxCertTTL + time.Hour, "ttl"},
	}
	for _, c := range cases {
		_, err := IssueCert(f.issuer, c.subject, c.orgs, pub, c.ttl, t0)
		require.ErrorContains(t, err, c.reason, "subject %q orgs %v", c.subject, c.orgs)
	}
	_, err = IssueCert(f.issuer, "alice", []string{"acme"}, pub[:5], time.Hour, t0)
	require.ErrorContains(t, err, "caller public key")
	_, err = GenerateIssuer("has space")
	require.ErrorContains(t, err, "kid")
}

func TestAllOrgsCaller(t *testing.T) {
	f := newFixture(t)
	admin, err := NewCredential(f.issuer, "system:worker", []string{AllOrgs}, time.Hour, t0)
	require.NoError(t, err)
	body := scaleBody(t, 4)
	a, err := Sign(admin, poolID, msg, body, t0)
	require.NoError(t, err)
	c, err := Verify(f.trust, a, poolID, msg, body, t0)
	require.NoError(t, err)
	require.True(t, c.MayActFor("acme"))
	require.True(t, c.MayActFor("globex"))
	require.True(t, c.IsPlatform())
}

func TestSystemSignature(t *testing.T) {
	f := newFixture(t)
	clusterID := "cluster/sim-east"
	body := []byte(`{"reachable":true,"lastSync":"2026-03-01T12:00:00Z","at":"2026-03-01T12:00:00Z"}`)
	s, err := SignSystem(f.system, clusterID, contract.SignalWatcherReport, body, t0)
	require.NoError(t, err)
	require.NoError(t, VerifySystem(f.trust, s, clusterID, contract.SignalWatcherReport, body, t0.Add(time.Second)))
	require.NoError(t, VerifySystem(f.trust, s, clusterID, contract.SignalWatcherReport, body, t0.Add(30*time.Minute)), "waited in history while no worker ran")

	// Signed by the issuer under its own kid: an issuer key is no system key.
	byIssuer, err := SignSystem(f.issuer, clusterID, contract.SignalWatcherReport, body, t0)
	require.NoError(t, err)
	other, err := GenerateSystemKey(f.system.Kid)
	require.NoError(t, err)
	forged, err := SignSystem(other, clusterID, contract.SignalWatcherReport, body, t0)
	require.NoError(t, err)

	cases := []struct {
		name   string
		s      contract.SystemSignature
		wf     string
		msg    string
		body   []byte
		now    time.Time
		reason string
	}{
		{"issuer key", byIssuer, clusterID, contract.SignalWatcherReport, body, t0, `system kid "issuer-1" is not trusted`},
		{"no key", contract.SystemSignature{}, clusterID, contract.SignalWatcherReport, body, t0, `system kid "" is not trusted`},
		{"forged under the system kid", forged, clusterID, contract.SignalWatcherReport, body, t0, "does not cover this input"},
		{"dated in the future", s, clusterID, contract.SignalWatcherReport, body, t0.Add(-time.Hour), "ahead of now"},
		{"replayed much later", s, clusterID, contract.SignalWatcherReport, body, t0.Add(DefaultMaxSystemAge + time.Second), "old (at most 1h0m0s allowed)"},
		{"other workflow", s, "cluster/sim-west", contract.SignalWatcherReport, body, t0, "does not cover this input"},
		{"other message", s, clusterID, contract.SignalObserve, body, t0, "does not cover this input"},
		{"other body", s, clusterID, contract.SignalWatcherReport, []byte(`{"reachable":false}`), t0, "does not cover this input"},
		{"bad sig", contract.SystemSignature{Key: s.Key, At: s.At, Sig: "xx"}, clusterID, contract.SignalWatcherReport, body, t0, "not a base64url Ed25519 signature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := VerifySystem(f.trust, c.s, c.wf, c.msg, c.body, c.now)
			require.ErrorContains(t, err, c.reason)
		})
	}
	// A caller's envelope is no system signature and the other way round:
	// the domains differ.
	a, err := Sign(f.acme, clusterID, contract.SignalWatcherReport, body, t0)
	require.NoError(t, err)
	f.trust.System["x"] = EncodePublicKey(f.acme.Key.Public().(ed25519.PublicKey))
	err = VerifySystem(f.trust, contract.SystemSignature{Key: "x", At: a.At, Sig: a.Sig}, clusterID, contract.SignalWatcherReport, body, t0)
	require.ErrorContains(t, err, "does not cover this input")
}

func TestBearerToken(t *testing.T) {
	f := newFixture(t)
	tok, err := BearerToken(f.acme, t0, MaxBearerTTL)
	require.NoError(t, err)
	c, err := VerifyBearer(f.trust, BearerScheme+tok, t0.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, "alice@acme", c.Subject)

	_, err = BearerToken(f.acme, t0, MaxBearerTTL+time.Second)
	require.ErrorContains(t, err, "at most 5m0s")

	_, err = VerifyBearer(f.trust, tok, t0.Add(MaxBearerTTL))
	require.ErrorContains(t, err, "bearer token expired")
	_, err = VerifyBearer(f.trust, tok, t0.Add(-time.Hour))
	require.ErrorContains(t, err, "in the future")

	// A token that claims a long life, signed properly, is still refused.
	long, err := signJWT(f.acme.Key, jwtHeader{Alg: algEdDSA, Typ: typBearer},
		bearerClaims{Cert: f.acme.Cert, Iat: t0.Unix(), Exp: t0.Add(time.Hour).Unix(), Jti: "AAAAAAAAAAAAAAAAAAAAAA"})
	require.NoError(t, err)
	_, err = VerifyBearer(f.trust, long, t0)
	require.ErrorContains(t, err, "longer than 5m0s")

	// Someone else's certificate in a token signed by mallory's key.
	mallory, err := NewCredential(f.issuer, "mallory", []string{"globex"}, time.Hour, t0)
	require.NoError(t, err)
	stolen, err := signJWT(mallory.Key, jwtHeader{Alg: algEdDSA, Typ: typBearer},
		bearerClaims{Cert: f.acme.Cert, Iat: t0.Unix(), Exp: t0.Add(time.Minute).Unix(), Jti: "AAAAAAAAAAAAAAAAAAAAAA"})
	require.NoError(t, err)
	_, err = VerifyBearer(f.trust, stolen, t0)
	require.ErrorContains(t, err, `not signed by the key of "alice@acme"`)

	_, err = VerifyBearer(f.trust, f.acme.Cert, t0)
	require.ErrorContains(t, err, `typ "visor-cert" is not "visor-pop"`)
	_, err = VerifyBearer(f.trust, "", t0)
	require.ErrorContains(t, err, "bearer token is missing")
	_, err = VerifyBearer(f.trust, tamperClaims(t, tok, `"jti":"BBBBBBBBBBBBBBBBBBBBBB"`), t0)
	require.ErrorContains(t, err, "not signed by the key")
}

func TestCredentialFiles(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "alice.json")
	require.NoError(t, SaveCredential(path, f.acme))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	dst, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dst.Mode().Perm())

	got, err := LoadCredential("file:" + path)
	require.NoError(t, err)
	require.Equal(t, f.acme.Cert, got.Cert)
	require.True(t, f.acme.Key.Equal(got.Key))
	info, err := got.Info()
	require.NoError(t, err)
	require.Equal(t, "alice@acme", info.Subject)
	require.Equal(t, t0.Add(time.Hour).Truncate(time.Second), info.Expires)

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	t.Setenv("VISOR_TEST_CREDENTIAL", string(raw))
	_, err = LoadCredential("env:VISOR_TEST_CREDENTIAL")
	require.NoError(t, err)

	// An old file with looser permissions is replaced at 0600.
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, SaveCredential(path, f.acme))
	st, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// The key must be the one the certificate names.
	other, err := NewCredential(f.issuer, "bob", []string{"acme"}, time.Hour, t0)
	require.NoError(t, err)
	var file map[string]any
	require.NoError(t, json.Unmarshal(raw, &file))
	file["cert"] = other.Cert
	swapped, _ := json.Marshal(file)
	require.NoError(t, os.WriteFile(path, swapped, 0o600))
	_, err = LoadCredential("file:" + path)
	require.ErrorContains(t, err, "not the key its certificate names")

	file["cert"] = f.acme.Cert
	file["extra"] = true
	extra, _ := json.Marshal(file)
	require.NoError(t, os.WriteFile(path, extra, 0o600))
	_, err = LoadCredential("file:" + path)
	require.ErrorContains(t, err, `unknown field "extra"`)

	_, err = LoadCredential("file:" + filepath.Join(dir, "missing.json"))
	require.ErrorContains(t, err, "missing.json")
	_, err = LoadCredential(path)
	require.ErrorContains(t, err, "reference must be")
}

func TestSigningKeyAndTrustFiles(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "system-key.json")
	require.NoError(t, SaveSigningKey(keyPath, f.system))
	k, err := LoadSigningKey("file:" + keyPath)
	require.NoError(t, err)
	require.Equal(t, f.system.Kid, k.Kid)
	require.True(t, f.system.Private.Equal(k.Private))
	b, err := os.ReadFile(keyPath)
	require.NoError(t, err)
	require.NotContains(t, string(b), EncodePublicKey(f.system.Private.Public().(ed25519.PublicKey)), "the file holds the seed only")

	trustPath := filepath.Join(dir, "trust.json")
	require.NoError(t, SaveTrust(trustPath, f.trust))
	tr, err := LoadTrust("file:" + trustPath)
	require.NoError(t, err)
	require.Equal(t, f.trust, tr)

	bad := Trust{Issuers: map[string]string{"issuer-1": "short"}, System: map[string]string{"bad kid": f.system.Public()}, MaxSkew: -1}
	err = bad.Validate()
	require.ErrorContains(t, err, "trust.issuers.issuer-1: not a base64url Ed25519 public key")
	require.ErrorContains(t, err, `trust.system: kid "bad kid"`)
	require.ErrorContains(t, err, "trust.maxSkew")
	require.ErrorContains(t, Trust{}.Validate(), "no issuer key")
	require.Error(t, SaveTrust(filepath.Join(dir, "bad.json"), bad))
	_, err = os.Stat(filepath.Join(dir, "bad.json"))
	require.True(t, os.IsNotExist(err), "a refused trust writes nothing")

	require.NoError(t, os.WriteFile(trustPath, []byte(`{"issuers":{},"issuer":{}}`), 0o600))
	_, err = LoadTrust("file:" + trustPath)
	require.ErrorContains(t, err, `unknown field "issuer"`)
}

func TestCanonical(t *testing.T) {
	a, err := Canonical([]byte(`{"b":1.50,"a":{"y":[1,2],"x":"\u003c"},"auth":{"sig":"x"}}`))
	require.NoError(t, err)
	require.Equal(t, `{"a":{"x":"\u003c","y":[1,2]},"b":1.50}`, string(a))
	_, err = Canonical(make([]byte, MaxBodyBytes+1))
	require.ErrorContains(t, err, "more than")
}

// tamperClaims replaces the token's claims with its own claims plus an
// extra or replaced field, keeping the old signature.
func tamperClaims(t testing.TB, token, field string) string {
	parts := strings.Split(token, ".")
	claims, err := b64.DecodeString(parts[1])
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(claims, &m))
	var extra map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte("{"+field+"}"), &extra))
	for k, v := range extra {
		m[k] = v
	}
	nb, err := json.Marshal(m)
	require.NoError(t, err)
	return parts[0] + "." + b64.EncodeToString(nb) + "." + parts[2]
}

func flip(sig string) string {
	b, _ := b64.DecodeString(sig)
	b[0] ^= 1
	return b64.EncodeToString(b)
}

func TestVerifyCredential(t *testing.T) {
	f := newFixture(t)
	c, err := VerifyCredential(f.trust, f.acme, t0)
	require.NoError(t, err)
	require.Equal(t, "alice@acme", c.Subject)
	_, err = VerifyCredential(f.trust, f.acme, t0.Add(2*time.Hour))
	require.ErrorContains(t, err, "certificate expired")
	other, err := NewCredential(f.issuer, "bob", []string{"acme"}, time.Hour, t0)
	require.NoError(t, err)
	_, err = VerifyCredential(f.trust, Credential{Key: other.Key, Cert: f.acme.Cert}, t0)
	require.ErrorContains(t, err, "not the key its certificate names")
}
