package main

import (
	"bytes"
	"fmt"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAgo(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now.Add(-42 * time.Second), "42s ago"},
		{now.Add(-7 * time.Minute), "7m ago"},
		{now.Add(-26*time.Hour - 5*time.Minute), "26h5m ago"},
		{now.Add(-72 * time.Hour), "2025-02-26 12:00Z"},
		{now.Add(time.Minute), "2025-03-01T12:01:00Z"},
	} {
		require.Equal(t, c.want, ago(c.t, now))
	}
}

func TestWriteOutputFormats(t *testing.T) {
	v := map[string]int{"nodes": 3}
	table := func(tw *tabwriter.Writer) { fmt.Fprintf(tw, "NODES\t%d\n", v["nodes"]) }
	for format, want := range map[string]string{
		outputTable: "NODES  3\n",
		outputJSON:  "{\n  \"nodes\": 3\n}\n",
		outputYAML:  "nodes: 3\n",
	} {
		var b bytes.Buffer
		require.NoError(t, writeOutput(&b, format, v, table))
		require.Equal(t, want, b.String(), format)
	}
	require.ErrorContains(t, writeOutput(&bytes.Buffer{}, "toml", v, table), `output format "toml" is not table, json or yaml`)
}
