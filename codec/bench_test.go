package codec

import (
	"strings"
	"testing"

	"github.com/hanzoai/visor-fleet/contract"
)

// BenchmarkRoundTrip is what every payload costs a client or worker: encode
// (JSON + seal) and decode (open + JSON) of a pool status of ~4 KiB.
func BenchmarkRoundTrip(b *testing.B) {
	k, err := GenerateKey("k1")
	if err != nil {
		b.Fatal(err)
	}
	dc := NewDataConverter(Keys{k})
	st := contract.PoolStatus{State: "steady", Nodes: 12, PausedReason: strings.Repeat("r", 4000)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := dc.ToPayload(st)
		if err != nil {
			b.Fatal(err)
		}
		var out contract.PoolStatus
		if err := dc.FromPayload(p, &out); err != nil {
			b.Fatal(err)
		}
	}
}
