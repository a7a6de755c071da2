package score

// multiNode looks for the longest prefix of the candidates (at least two,
// at most MaxMultiCandidates, within the budget) that can be deleted or
// replaced by one cheaper node, by binary search on its length as
// Karpenter does (the search assumes a prefix that cannot go means no
// longer one can).
func (k *Karpenter) multiNode(c *Cluster, cands []*simNode, budget int) (bool, error) {
	if c.Cordoned() > 0 {
		return false, nil // a replacement is booting; see Karpenter's doc
	}
	cands = cands[:min(len(cands), budget, k.MaxMultiCandidates)]
	if len(cands) < 2 {
		return false, nil
	}
	lo, hi := 1, len(cands)-1
	var best []*simNode
	var bestCons consolidation
	for lo <= hi {
		mid := (lo + hi) / 2
		prefix := cands[:mid+1]
		cons := k.simulate(c, prefix)
		if cons.ok && k.keepsFloor(c, prefix, cons) {
			best, bestCons = prefix, cons
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	if best == nil {
		return false, nil
	}
	return true, k.execute(c, best, bestCons)
}

// keepsFloor says whether the pool stays at or above its floor after
// the consolidation.
func (k *Karpenter) keepsFloor(c *Cluster, cands []*simNode, cons consolidation) bool {
	gone := len(cands)
	if cons.replace != nil {
		gone--
	}
	return gone <= k.spare(c)
}
