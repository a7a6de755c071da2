package poolcore

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/hanzoai/visor-fleet/types"
)

// Bounds on what one pool carries in its state and across Continue-As-New,
// whatever arrives: no message can grow it without limit.
const (
	MaxRejectionText  = 1024
	MaxRejectionKinds = 32
	// MaxTextLen bounds reason and requestedBy on every request.
	MaxTextLen = 1024
	// MaxPendingKept bounds the pending pods an observation carries into
	// state (and the purchases remembered for them).
	MaxPendingKept = types.MaxPendingPods
	// maxNodesKept bounds the nodes of one observation.
	maxNodesKept = types.MaxPolicyNodes
)

// boundObservation keeps an observation within the bounds: the oldest
// pending pods (the ones due first), every node up to the bound. With
// shapes, every pending pod stays counted in its shape; an observation
// without them gets them from its list.
func boundObservation(obs types.PoolObservation) types.PoolObservation {
	obs = obs.SummarizePending(MaxPendingKept, types.MaxPendingShapes)
	if len(obs.Nodes) > maxNodesKept {
		obs.Truncated += len(obs.Nodes) - maxNodesKept
		obs.Nodes = obs.Nodes[:maxNodesKept]
	}
	return obs
}

// CheckText refuses text that is too long or holds control characters,
// naming the field.
func CheckText(field, v string) error {
	if len(v) > MaxTextLen {
		return fmt.Errorf("%s is %d bytes, at most %d", field, len(v), MaxTextLen)
	}
	if i := strings.IndexFunc(v, unicode.IsControl); i >= 0 {
		return fmt.Errorf("%s holds a control character at byte %d", field, i)
	}
	return nil
}

// Truncate cuts s to at most n bytes on a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
