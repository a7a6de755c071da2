package auth

import "testing"

// BenchmarkVerify is what a workflow validator pays per mutating request.
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b)
	body := scaleBody(b, 4)
	a, err := Sign(f.acme, poolID, msg, body, t0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(f.trust, a, poolID, msg, body, t0); err != nil {
			b.Fatal(err)
		}
	}
}
