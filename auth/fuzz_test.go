package auth

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hanzoai/visor-fleet/contract"
)

// FuzzVerify feeds garbage envelopes, bodies and bearer tokens: verification
// must refuse them with an error, never panic, and never accept one it was
// not given a valid signature for.
func FuzzVerify(f *testing.F) {
	fx := newFixture(f)
	body := scaleBody(f, 4)
	good, err := Sign(fx.acme, poolID, msg, body, t0)
	if err != nil {
		f.Fatal(err)
	}
	bearer, err := BearerToken(fx.acme, t0, time.Minute)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good.Cert, good.Nonce, good.Sig, body, int64(0))
	f.Add(bearer, "", "", []byte(`null`), int64(1))
	f.Add("e30.e30.e30", "AAAAAAAAAAAAAAAAAAAAAA", "", []byte(`{"auth":1}`), int64(-1))
	f.Add("..", "", "", []byte(`[`), int64(1<<62))
	f.Fuzz(func(t *testing.T, cert, nonce, sig string, body []byte, shift int64) {
		a := contract.Authorization{Cert: cert, At: t0.Add(time.Duration(shift)), Nonce: nonce, Sig: sig}
		caller, err := Verify(fx.trust, a, poolID, msg, body, t0)
		if err == nil {
			// Only the seeded valid envelope with its own body can pass.
			if cert != good.Cert || sig != good.Sig || caller.Subject != "alice@acme" {
				t.Fatalf("accepted a forged envelope: %+v", a)
			}
			var req contract.ScaleRequest
			if json.Unmarshal(body, &req) != nil || req.Target != 4 {
				t.Fatalf("accepted another body: %q", body)
			}
		}
		_, _ = VerifyBearer(fx.trust, cert, t0.Add(time.Duration(shift)))
		_ = VerifySystem(fx.trust, contract.SystemSignature{Key: nonce, At: a.At, Sig: sig}, poolID, msg, body, t0)
		_, _ = ReadCertInfo(cert)
	})
}
