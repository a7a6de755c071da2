package score

// singleNode deletes or replaces the first candidate, in order, whose pods
// fit elsewhere or on one strictly cheaper node.
func (k *Karpenter) singleNode(c *Cluster, cands []*simNode, budget int) (bool, error) {
	if c.Cordoned() > 0 || budget < 1 {
		return false, nil
	}
	for _, nd := range cands {
		one := []*simNode{nd}
		if cons := k.simulate(c, one); cons.ok && k.keepsFloor(c, one, cons) {
			return true, k.execute(c, one, cons)
		}
	}
	return false, nil
}
