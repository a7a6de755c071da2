package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSafeEscapesWhatWouldActOnTheTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"maintenance":            "maintenance",
		"naïve — ok 🚀":           "naïve — ok 🚀",
		"\x1b[2J\x1b[31mgone":    `\x1b[2J\x1b[31mgone`,
		"line\nbreak\r\tend\x00": `line\nbreak\r\tend\x00`,
		"c1\u009bx":              `c1\u009bx`,
		"rtl\u202eexe.txt":       `rtl\u202eexe.txt`,
		"bell\a and del\x7f":     `bell\a and del\x7f`,
		"sep\u2028next":          `sep\u2028next`,
	} {
		require.Equal(t, want, safe(in), "%q", in)
	}
}

func TestPlural(t *testing.T) {
	require.Equal(t, "1 node", plural(1, "node", "nodes"))
	require.Equal(t, "0 nodes", plural(0, "node", "nodes"))
	require.Equal(t, "2 nodes", plural(2, "node", "nodes"))
}
