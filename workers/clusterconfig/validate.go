package clusterconfig

import (
	"fmt"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// Validate checks every cluster entry and returns a *FileError listing all
// problems, or nil. It reads no credential and touches no file or network:
// those are the activity's to reach.
func (f File) Validate() error {
	ps := &problems{index: -1}
	if len(f.Clusters) == 0 && len(f.Orgs) == 0 {
		ps.add("clusters", "the file lists no clusters (and no orgs)")
	}
	seen := map[string]int{}
	for i, c := range f.Clusters {
		ps.at(i, c.ID)
		if err := types.ValidateDNSLabel("id", c.ID); err != nil {
			ps.add("id", "%v", err)
		} else if first, dup := seen[c.ID]; dup {
			ps.add("id", "cluster %q is also clusters[%d]; each cluster is listed once", c.ID, first)
		} else {
			seen[c.ID] = i
		}
		c.validate(ps)
	}
	orgs := map[string]int{}
	for i, o := range f.Orgs {
		field := fmt.Sprintf("orgs[%d]", i)
		if err := o.Validate(); err != nil {
			ps.top(field, "%v", err)
		} else if first, dup := orgs[o.Org]; dup {
			ps.top(field, "org %q is also orgs[%d]; each org is listed once", o.Org, first)
		} else {
			orgs[o.Org] = i
		}
	}
	if len(ps.list) == 0 {
		return nil
	}
	return &FileError{Path: f.Path, Problems: ps.list}
}

func (c ClusterSpec) validate(ps *problems) {
	kind, known := connectors.LookupKind(c.Provider)
	if !known {
		ps.add("provider", "%q is not one of %s", c.Provider, strings.Join(connectors.KindNames(), ", "))
	}
	for _, name := range connectors.KindNames() {
		if _, given := c.Sections[name]; given && name != c.Provider {
			ps.add(name, "section given, but provider is %q; keep only the %q section", c.Provider, c.Provider)
		}
	}
	checkRef(ps, "enrollmentToken", c.EnrollmentToken, false)
	if c.Prometheus != nil {
		if kind.OwnsCluster {
			ps.add("prometheus", "a %s cluster has no metrics store; remove the section", c.Provider)
		} else {
			c.Prometheus.validate(ps, c.ID)
		}
	}
	if c.Informers && c.Provider == Sim {
		ps.add("informers", "a sim cluster is observed by lists only; remove informers")
	}
	if c.KubeContext != "" && c.Kubeconfig == "" {
		ps.add("kubeContext", "is set but kubeconfig is empty; an in-cluster service account has no contexts")
	}
	if !known {
		return
	}
	if kind.OwnsCluster && c.Kubeconfig != "" {
		ps.add("kubeconfig", "must be empty for a %s cluster; it has its own in-process API", c.Provider)
	}
	cfg := c.Config()
	if cfg == nil {
		if !kind.OwnsCluster {
			ps.add(c.Provider, "section is missing")
		}
		return
	}
	cfg.Validate(section{ps: ps, name: c.Provider})
}
