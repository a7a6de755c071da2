package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hanzoai/visor-fleet/contract"
)

// describe names the run and the pool's Web UI page; -o json carries both.
func TestPoolDescribeShowsRunAndWebUIPage(t *testing.T) {
	var d poolDescription
	require.NoError(t, json.Unmarshal([]byte(mustVisor(t, "pool", "describe", searchPool, "-o", "json")), &d))
	require.NotEmpty(t, d.RunID)
	wantURL := devUIURL + "/namespaces/" + url.PathEscape(env.namespace) + "/workflows/pool%2Facme%2Fweb%2Fsearch%2Fsim%2Fsim-cli/" + d.RunID + "/history"
	require.Equal(t, wantURL, d.WebUI)

	human := mustVisor(t, "pool", "describe", searchPool)
	require.Regexp(t, `(?m)^Run:\s+`+d.RunID+`$`, human)
	require.Regexp(t, `(?m)^Web UI:\s+`+regexpQuote(wantURL)+`$`, human)

	human = mustVisor(t, "pool", "describe", searchPool, "--ui-url", "https://ui.example.internal/")
	require.Contains(t, human, "https://ui.example.internal/namespaces/")

	// The list carries run IDs too.
	for _, s := range listJSON(t, "--service", "search") {
		require.Equal(t, d.RunID, s.RunID)
	}
}

func regexpQuote(s string) string {
	r := strings.NewReplacer(".", `\.`, "?", `\?`, "+", `\+`, "(", `\(`, ")", `\)`)
	return r.Replace(s)
}

// The summary says how many decisions it shows, escapes what callers
// wrote, and reads "yes (by who): reason" for a pause.
func TestDescribeSummaryWording(t *testing.T) {
	st := contract.PoolStatus{State: "paused", Paused: true, PausedReason: "disk \x1b[2Jswap (by ops\x07)",
		Blocked: []string{"3 pods pending\nFAKE LINE"}}
	for i := range 23 {
		st.Decisions = append(st.Decisions, contract.DecisionRecord{Seq: int64(i + 1), At: time.Unix(0, 0), Action: "scale-up", Reason: fmt.Sprintf("r%d", i+1), Outcome: "ok"})
	}
	st.Decisions[22].Reason = "evil\x1b]0;title\x07"
	render := func(n int) string {
		var b bytes.Buffer
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		describePool(tw, poolDescription{PoolStatus: st}, n, time.Unix(100, 0))
		require.NoError(t, tw.Flush())
		return b.String()
	}
	out := render(5)
	require.Contains(t, out, "Decisions (newest last; showing 5 of 23, --decisions N for more):")
	require.Contains(t, out, "#19")
	require.NotContains(t, out, "#18 ")
	require.Contains(t, out, `Paused:            yes (by ops\a): disk \x1b[2Jswap`)
	require.Contains(t, out, `3 pods pending\nFAKE LINE`)
	require.Contains(t, out, `evil\x1b]0;title\a`)
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\x07")
	require.Contains(t, render(0), "Decisions (newest last; all 23):")
	require.NotContains(t, out, "Lifecycle:")
	st.Drifted, st.Expired, st.Due = 2, 1, []string{"n1: drifted: size x is no longer allowed"}
	out = render(1)
	require.Contains(t, out, "Lifecycle:         2 drifted, 1 expired")
	require.Contains(t, out, "Due:               n1: drifted: size x is no longer allowed")

	require.Equal(t, "yes", pausedLine(""))
	require.Equal(t, "yes (by visor-cli)", pausedLine("(by visor-cli)"))
	require.Equal(t, "yes: hold it", pausedLine("hold it"))
}

func TestPauseNeedsAReasonAndTLSKeyNeedsACert(t *testing.T) {
	_, _, err := visor(t, "pool", "pause", apiPool)
	require.ErrorContains(t, err, `required flag(s) "reason" not set`)
	_, _, err = visor(t, "--tls-key", "client.key", "pool", "list")
	require.ErrorContains(t, err, "--tls-key (TEMPORAL_TLS_KEY) client.key is given without --tls-cert")
	_, _, err = visor(t, "--tls-cert", "client.crt", "pool", "list")
	require.ErrorContains(t, err, "--tls-cert (TEMPORAL_TLS_CERT) client.crt is given without --tls-key")
}

func TestDevRefusesAnAddressBeyondLoopback(t *testing.T) {
	_, _, err := visorWith(t, "dev", "--ip", "0.0.0.0", "--memory")
	require.ErrorContains(t, err, "--ip 0.0.0.0 listens beyond this machine, but the embedded server does not authenticate its callers")
	out, _, err := visorWith(t, "dev", "--help")
	require.NoError(t, err)
	require.Contains(t, out, "--grpc-port")
	require.Contains(t, out, "--log-level")
	for _, client := range []string{"--address", "--namespace", "--tls-cert", "--tls-key"} {
		require.NotContains(t, out, client)
	}
}
