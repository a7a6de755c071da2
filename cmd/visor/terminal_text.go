package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// safe makes text that came from a pool, a cluster or another caller
// (reasons, requestedBy, blocked and frozen explanations) safe to print on
// a terminal: control characters, escape sequences included, are shown
// escaped (\x1b, \n) instead of acting on the terminal. JSON and YAML
// output is not touched: their encoders escape what they must.
func safe(s string) string {
	if strings.IndexFunc(s, isUnsafe) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isUnsafe(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r) // '\x1b', '\n', '\u2028'
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// isUnsafe: C0 and C1 controls, DEL, and the Unicode line and paragraph
// separators and bidi overrides that can make text lie about itself.
func isUnsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// plural writes "1 node", "2 nodes".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
