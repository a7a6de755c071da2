package score

// emptiness deletes the empty candidates, as many as the budget and the
// floor allow, in one command.
func (k *Karpenter) emptiness(c *Cluster, cands []*simNode, budget int) (bool, error) {
	var names []string
	for _, nd := range cands {
		if len(names) >= min(budget, k.spare(c)) {
			break
		}
		if len(nd.pods) == 0 {
			names = append(names, nd.name)
		}
	}
	if len(names) == 0 {
		return false, nil
	}
	return true, c.RemoveNodes(names)
}
