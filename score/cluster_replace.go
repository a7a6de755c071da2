package score

import "fmt"

// replacement is old nodes cordoned while the one new node that will take
// their pods boots.
type replacement struct {
	node string
	old  []string
}

// ReplaceNodes starts replacing the named nodes by one new node of size:
// they are cordoned (no new pods bind) at once, and drained and deleted as
// one scale-down once the new node is Ready, so their pods wait for no
// boot. It returns the new node's name; a ceiling that leaves no room
// replaces nothing.
func (c *Cluster) ReplaceNodes(old []string, size string) (string, error) {
	if len(old) == 0 {
		return "", fmt.Errorf("replace: no nodes named")
	}
	for _, name := range old {
		nd := c.byName[name]
		switch {
		case nd == nil:
			return "", fmt.Errorf("replace: no node %q", name)
		case nd.cordoned:
			return "", fmt.Errorf("replace: node %s is already being replaced", name)
		case nd.pinned > 0:
			return "", fmt.Errorf("replace: node %s holds %d pods that must not be evicted", name, nd.pinned)
		}
	}
	added, err := c.AddNodes(size, 1)
	if err != nil || added == 0 {
		return "", err
	}
	nd := c.nodes[len(c.nodes)-1]
	for _, name := range old {
		c.byName[name].cordoned = true
	}
	c.gen++
	c.replacing = append(c.replacing, replacement{node: nd.name, old: append([]string(nil), old...)})
	return nd.name, nil
}

// Cordoned counts the nodes waiting to be replaced.
func (c *Cluster) Cordoned() int {
	n := 0
	for _, r := range c.replacing {
		n += len(r.old)
	}
	return n
}

// completeReplacements drains the old nodes of every replacement whose new
// node is Ready; one whose new node is gone gives its old nodes back.
func (c *Cluster) completeReplacements() error {
	kept := c.replacing[:0]
	for _, r := range c.replacing {
		nd := c.byName[r.node]
		switch {
		case nd == nil:
			for _, name := range r.old {
				if old := c.byName[name]; old != nil {
					old.cordoned = false
					c.dirty, c.gen = true, c.gen+1
				}
			}
		case nd.ready:
			var old []string
			for _, name := range r.old {
				if c.byName[name] != nil {
					old = append(old, name)
				}
			}
			if err := c.RemoveNodes(old); err != nil {
				return err
			}
			c.stats.replacements++
		default:
			kept = append(kept, r)
		}
	}
	c.replacing = kept
	return nil
}
