// Package types holds the domain values every other package speaks: pool
// identity, resources, observations and policy. It depends on nothing else
// in the module, so workflows, activities, sizing and connectors can all
// share it without cycles.
package types

import (
	"fmt"
	"regexp"
	"strings"
)

// Labels carried by pods and nodes (from the HIP).
const (
	LabelOrg     = "hanzo.ai/org"
	LabelProject = "hanzo.ai/project"
	LabelService = "hanzo.ai/service"
	LabelPool    = "hanzo.ai/pool"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// PoolKey identifies a pool: the HIP's (org, project, service, provider)
// tuple bound to one cluster.
type PoolKey struct {
	Org      string `json:"org"`
	Project  string `json:"project"`
	Service  string `json:"service"`
	Provider string `json:"provider"`
	Cluster  string `json:"cluster"`
}

// ValidateDNSLabel reports whether v is a lower-case DNS label, naming the
// part in the error so a user knows which field to fix.
func ValidateDNSLabel(part, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty; it must be a lower-case DNS label", part)
	}
	if !dnsLabel.MatchString(v) {
		return fmt.Errorf("%s %q is not a lower-case DNS label ([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)", part, v)
	}
	return nil
}

// Validate checks every part of the key.
func (k PoolKey) Validate() error {
	for _, p := range []struct{ name, v string }{
		{"org", k.Org}, {"project", k.Project}, {"service", k.Service},
		{"provider", k.Provider}, {"cluster", k.Cluster},
	} {
		if err := ValidateDNSLabel(p.name, p.v); err != nil {
			return err
		}
	}
	return nil
}

// WorkflowID is the pool workflow's ID: pool/<org>/<project>/<service>/<provider>/<cluster>.
func (k PoolKey) WorkflowID() string {
	return "pool/" + k.Org + "/" + k.Project + "/" + k.Service + "/" + k.Provider + "/" + k.Cluster
}

func (k PoolKey) String() string { return k.WorkflowID() }

// NodePoolLabel is the value of hanzo.ai/pool on this pool's nodes. Label
// values cannot hold '/', and the cluster is implied by where the node lives,
// so it is org.project.service.provider.
func (k PoolKey) NodePoolLabel() string {
	return k.Org + "." + k.Project + "." + k.Service + "." + k.Provider
}

// ValidateNodePoolLabel accepts what NodePoolLabel makes:
// org.project.service.provider, each a lower-case DNS label.
func ValidateNodePoolLabel(label string) error {
	parts := strings.Split(label, ".")
	if len(parts) != 4 {
		return fmt.Errorf("pool label %q must be org.project.service.provider", label)
	}
	for i, part := range parts {
		if err := ValidateDNSLabel([]string{"org", "project", "service", "provider"}[i], part); err != nil {
			return err
		}
	}
	return nil
}

// NodeLabels are the labels a pool's nodes carry: the pool and its tenant.
func (k PoolKey) NodeLabels() map[string]string {
	return map[string]string{
		LabelPool: k.NodePoolLabel(), LabelOrg: k.Org, LabelProject: k.Project, LabelService: k.Service,
	}
}

// ParsePoolID parses a pool workflow ID back into its key, validating each part.
func ParsePoolID(id string) (PoolKey, error) {
	parts := strings.Split(id, "/")
	if len(parts) != 6 || parts[0] != "pool" {
		return PoolKey{}, fmt.Errorf("pool ID %q must look like pool/<org>/<project>/<service>/<provider>/<cluster>", id)
	}
	k := PoolKey{Org: parts[1], Project: parts[2], Service: parts[3], Provider: parts[4], Cluster: parts[5]}
	if err := k.Validate(); err != nil {
		return PoolKey{}, fmt.Errorf("pool ID %q: %w", id, err)
	}
	return k, nil
}

// ClusterWorkflowID is the cluster workflow's ID: cluster/<cluster-id>.
func ClusterWorkflowID(cluster string) string { return "cluster/" + cluster }
