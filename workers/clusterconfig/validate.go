package clusterconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/aws"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
	"github.com/hanzoai/visor-fleet/connectors/vsphere"
	"github.com/hanzoai/visor-fleet/types"
)

// Validate checks every cluster entry and returns a *FileError listing all
// problems, or nil. It reads no credential and touches no file or network:
// those are the activity's to reach.
func (f File) Validate() error {
	ps := &problems{index: -1}
	if len(f.Clusters) == 0 {
		ps.add("clusters", "the file lists no clusters")
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
	if len(ps.list) == 0 {
		return nil
	}
	return &FileError{Path: f.Path, Problems: ps.list}
}

func (c ClusterSpec) validate(ps *problems) {
	if !slices.Contains(Providers, c.Provider) {
		ps.add("provider", "%q is not one of %s", c.Provider, strings.Join(Providers, ", "))
	}
	sections := map[string]bool{
		DigitalOcean: c.DigitalOcean != nil, AWS: c.AWS != nil, Hetzner: c.Hetzner != nil,
		VSphere: c.VSphere != nil, Sim: c.Sim != nil,
	}
	for _, kind := range Providers {
		if sections[kind] && kind != c.Provider {
			ps.add(kind, "section given, but provider is %q; keep only the %q section", c.Provider, c.Provider)
		}
	}
	checkRef(ps, "enrollmentToken", c.EnrollmentToken, false)
	if c.Prometheus != nil {
		if c.Provider == Sim {
			ps.add("prometheus", "a sim cluster has no metrics store; remove the section")
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
	if c.Provider != Sim && !sections[c.Provider] && slices.Contains(Providers, c.Provider) {
		ps.add(c.Provider, "section is missing")
		return
	}
	switch c.Provider {
	case DigitalOcean:
		validateDigitalOcean(ps, *c.DigitalOcean)
	case AWS:
		validateAWS(ps, *c.AWS)
	case Hetzner:
		validateHetzner(ps, *c.Hetzner)
	case VSphere:
		validateVSphere(ps, *c.VSphere)
	case Sim:
		if c.Kubeconfig != "" {
			ps.add("kubeconfig", "must be empty for a sim cluster; it has its own in-process API")
		}
		if c.Sim != nil {
			c.Sim.validate(ps)
		}
	}
}

func validateDigitalOcean(ps *problems, d digitalocean.Config) {
	checkRef(ps, "digitalocean.credentials", d.Credentials, true)
	ps.required("digitalocean.clusterID", d.ClusterID, "the DOKS cluster UUID")
	ps.notNegative("digitalocean.retryMax", d.RetryMax)
}

func validateAWS(ps *problems, a aws.Config) {
	checkRef(ps, "aws.credentials", a.Credentials, true)
	ps.required("aws.region", a.Region, "an AWS region such as eu-west-1")
	switch a.Mode {
	case aws.ModeEKS:
		ps.required("aws.clusterName", a.ClusterName, `the EKS cluster's name in mode "eks"`)
	case aws.ModeASG, aws.ModeEC2:
	default:
		ps.add("aws.mode", "%q is not one of eks, asg, ec2", a.Mode)
	}
}

func validateHetzner(ps *problems, h hetzner.Config) {
	checkRef(ps, "hetzner.credentials", h.Credentials, true)
	checkRef(ps, "hetzner.clusterJoin", h.ClusterJoin, false)
	ps.required("hetzner.location", h.Location, "a Hetzner location such as fsn1")
	ps.required("hetzner.image", h.Image, "an image name or ID such as ubuntu-24.04")
	ps.notNegative("hetzner.retryMax", h.RetryMax)
}

func validateVSphere(ps *problems, v vsphere.Config) {
	checkRef(ps, "vsphere.credentials", v.Credentials, true)
	ps.required("vsphere.endpoint", v.Endpoint, "the vCenter URL or host name")
	ps.required("vsphere.folder", v.Folder, "the inventory folder pools' VMs go under")
	if len(v.Templates) == 0 {
		ps.add("vsphere.templates", "is empty; each size is a template VM")
	}
	for i, t := range v.Templates {
		ps.required(fmt.Sprintf("vsphere.templates[%d].name", i), t.Name, "the size's name")
		ps.required(fmt.Sprintf("vsphere.templates[%d].path", i), t.Path, "the template VM's inventory path")
	}
}

func (s SimConfig) validate(ps *problems) {
	if s.Tick < 0 {
		ps.add("sim.tick", "must not be negative, got %s", s.Tick)
	}
	if s.ProvisionDelay < 0 {
		ps.add("sim.provisionDelay", "must not be negative, got %s", s.ProvisionDelay)
	}
	for _, p := range s.Faults.Problems() {
		ps.add("sim.faults."+p.Field, "%s", p.Message)
	}
}

// Credential reference kinds, as connectors.CredentialRef resolves them.
const (
	refEnv    = "env:"
	refFile   = "file:"
	refSecret = "secret:"
)

// checkRef checks a reference's form only; whether the secret behind it
// exists is the activity's to find out, on the worker that holds it.
func checkRef(ps *problems, field string, ref connectors.CredentialRef, required bool) {
	s := string(ref)
	if s == "" {
		if required {
			ps.add(field, "is empty; it must be a reference: env:NAME, file:PATH or secret:NAMESPACE/NAME/KEY")
		}
		return
	}
	switch {
	case strings.HasPrefix(s, refEnv) && len(s) > len(refEnv),
		strings.HasPrefix(s, refFile) && len(s) > len(refFile):
	case strings.HasPrefix(s, refSecret):
		parts := strings.Split(strings.TrimPrefix(s, refSecret), "/")
		if len(parts) != 3 || slices.Contains(parts, "") {
			ps.add(field, "%q must be secret:NAMESPACE/NAME/KEY", s)
		}
	default:
		// The value may be a pasted secret: never echo it.
		ps.add(field, "is not a reference (env:NAME, file:PATH or secret:NAMESPACE/NAME/KEY); put the secret where the worker can read it and reference it here")
	}
}
