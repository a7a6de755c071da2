package contract

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sampleReport() ObservedReport {
	return ObservedReport{
		ClusterID: "east", ReportedAt: time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.FixedZone("x", 7200)),
		SyncState: SyncConnected, Capabilities: Capabilities{MIG: true, RDMA: true}, AgentVersion: "1.4.2", Nodes: 12, Pools: 3,
	}
}

func TestMintedTokenIsPrefixedHighEntropyAndDerivesStableCredentials(t *testing.T) {
	a, err := MintEnrollmentToken()
	require.NoError(t, err)
	b, err := MintEnrollmentToken()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(a.Token, TokenPrefix))
	require.Len(t, a.Token, len(TokenPrefix)+43, "256 bits in base64url")
	require.NotEqual(t, a.Token, b.Token)
	hash, key, err := TokenCredentials(a.Token)
	require.NoError(t, err)
	require.Equal(t, a.Hash, hash)
	require.Equal(t, a.ReportKey, key)
	require.Len(t, hash, 64)
	require.NotContains(t, hash+key, strings.TrimPrefix(a.Token, TokenPrefix))
	require.Equal(t, "sha256:"+hash[:12], TokenFingerprint(hash))
}

func TestMalformedTokensAreRefusedWithoutEchoingThem(t *testing.T) {
	for _, tok := range []string{"", "abc", "vfe1.", "vfe1.not-base64!!", "vfe2." + strings.Repeat("A", 43), "vfe1." + strings.Repeat("A", 40)} {
		_, _, err := TokenCredentials(tok)
		require.Error(t, err, tok)
		if len(tok) > 6 {
			require.NotContains(t, err.Error(), tok)
		}
		_, err = SignObservedReport(tok, sampleReport())
		require.Error(t, err)
	}
}

func TestSignedReportVerifiesAfterAJSONRoundTrip(t *testing.T) {
	tok, err := MintEnrollmentToken()
	require.NoError(t, err)
	signed, err := SignObservedReport(tok.Token, sampleReport())
	require.NoError(t, err)
	raw, err := json.Marshal(signed)
	require.NoError(t, err)
	require.NotContains(t, string(raw), tok.Token)
	var back ObservedReport
	require.NoError(t, json.Unmarshal(raw, &back))
	require.NoError(t, back.VerifySignature(tok.ReportKey))
}

func TestSignatureCoversEveryFieldAndOnlyTheRightToken(t *testing.T) {
	tok, _ := MintEnrollmentToken()
	other, _ := MintEnrollmentToken()
	signed, err := SignObservedReport(tok.Token, sampleReport())
	require.NoError(t, err)
	require.NoError(t, signed.VerifySignature(tok.ReportKey))
	require.ErrorContains(t, signed.VerifySignature(other.ReportKey), "does not verify")

	tamper := map[string]func(*ObservedReport){
		"cluster": func(r *ObservedReport) { r.ClusterID = "west" },
		"time":    func(r *ObservedReport) { r.ReportedAt = r.ReportedAt.Add(time.Nanosecond) },
		"sync":    func(r *ObservedReport) { r.SyncState = SyncSyncing },
		"caps":    func(r *ObservedReport) { r.Capabilities.NVLink = true },
		"version": func(r *ObservedReport) { r.AgentVersion = "1.4.3" },
		"nodes":   func(r *ObservedReport) { r.Nodes = 13 },
		"pools":   func(r *ObservedReport) { r.Pools = 4 },
	}
	for name, f := range tamper {
		r := signed
		f(&r)
		require.ErrorContains(t, r.VerifySignature(tok.ReportKey), "does not verify", name)
	}
	r := signed
	r.Signature = "zz"
	require.ErrorContains(t, r.VerifySignature(tok.ReportKey), "not a base64url Ed25519 signature")
	require.ErrorContains(t, signed.VerifySignature("short"), "reportKey")
}

func TestObservedReportValidateNamesFields(t *testing.T) {
	r := ObservedReport{ClusterID: "East", SyncState: "up", AgentVersion: "a\nb", Nodes: -1, Pools: -2}
	err := r.Validate()
	for _, want := range []string{"clusterID", "reportedAt", "syncState", "agentVersion", "nodes -1", "pools -2"} {
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, sampleReport().Validate())
}

func BenchmarkVerifyObservedReport(b *testing.B) {
	tok, _ := MintEnrollmentToken()
	signed, _ := SignObservedReport(tok.Token, sampleReport())
	b.ReportAllocs()
	for b.Loop() {
		if err := signed.VerifySignature(tok.ReportKey); err != nil {
			b.Fatal(err)
		}
	}
}
