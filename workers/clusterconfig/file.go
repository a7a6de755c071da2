package clusterconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/types"
)

// File is a worker's clusters file.
type File struct {
	// Path is where the file was read from, for error messages.
	Path     string        `json:"-"`
	Clusters []ClusterSpec `json:"clusters"`
	// Orgs are the platform's limits on each org's pools (node ceilings
	// and cost budget, as docs/capacity-policies.md describes). They bind
	// every pool of the org whatever its spec says: a pool spec's
	// orgLimits can only tighten them, since a tenant may write its own
	// spec file and start its own pools.
	Orgs []types.OrgPolicy `json:"orgs,omitempty"`
}

// OrgLimits are the file's orgs by name.
func (f File) OrgLimits() map[string]types.OrgPolicy { return types.OrgsByName(f.Orgs) }

// ClusterSpec is one cluster: how to reach its Kubernetes API and its
// provider. Exactly the section named by Provider is set: each registered
// connectors.Kind reads its own section (digitalocean:, aws:, ...).
type ClusterSpec struct {
	// ID is the cluster ID, the last part of its pools' keys.
	ID string `json:"id"`
	// Provider is the provider kind, also the provider part of pool keys.
	Provider string `json:"provider"`
	// Kubeconfig is a kubeconfig file; empty means the worker's in-cluster
	// service account. A relative path is relative to the clusters file.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// KubeContext picks a context of Kubeconfig; empty means its current one.
	KubeContext string `json:"kubeContext,omitempty"`
	// EnrollmentToken references the token `visor cluster enroll` printed;
	// the watcher signs the cluster's observed state with it. Optional.
	EnrollmentToken connectors.CredentialRef `json:"enrollmentToken,omitempty"`

	// Prometheus, when set, is where node usage comes from instead of
	// metrics-server.
	Prometheus *PrometheusUsage `json:"prometheus,omitempty"`

	// Sections are the provider sections given, decoded by their kinds'
	// NewConfig, by kind name.
	Sections map[string]connectors.Config `json:"-"`

	// Informers makes the observer sample a watch-fed cache of pods and
	// pool nodes instead of listing them at every sample: a few requests a
	// worker's lifetime instead of a node list and every pod page per
	// sample. The connector then needs watch on pods and nodes, as the
	// shipped ClusterRole grants. Ignored for the sim.
	Informers bool `json:"informers,omitempty"`
}

// Config is the section of the cluster's own provider; nil when it is
// not given (a sim cluster may leave it out).
func (c ClusterSpec) Config() connectors.Config { return c.Sections[c.Provider] }

// Load reads and checks a clusters file. Relative paths in it (kubeconfig,
// file: references, the sim's statePath) are made relative to the file's
// folder, so the worker's working directory does not matter.
func Load(path string) (File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("clusters file: %w", err)
	}
	return Parse(path, raw)
}

// Parse is Load over bytes already read; path names the file in errors and
// anchors relative paths.
func Parse(path string, raw []byte) (File, error) {
	f := File{Path: path}
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		return File{}, locateDecodeError(path, raw, err)
	}
	f.Path = path
	if err := f.Validate(); err != nil {
		return File{}, err
	}
	f.anchorPaths(filepath.Dir(path))
	return f, nil
}

// locateDecodeError names the cluster entry a decoding error (an unknown
// field, a wrong type) is in, by decoding the entries one at a time.
func locateDecodeError(path string, raw []byte, err error) error {
	var loose struct {
		Clusters []json.RawMessage `json:"clusters"`
	}
	if yaml.Unmarshal(raw, &loose) == nil {
		for i, entry := range loose.Clusters {
			var spec ClusterSpec
			if entryErr := yaml.UnmarshalStrict(entry, &spec); entryErr != nil {
				var named struct {
					ID any `json:"id"`
				}
				_ = json.Unmarshal(entry, &named)
				return fmt.Errorf("%s: clusters[%d] (id %q): %w", path, i, fmt.Sprint(named.ID), entryErr)
			}
		}
	}
	return fmt.Errorf("%s: %w", path, err)
}

// anchorPaths rewrites relative paths to be relative to dir.
func (f *File) anchorPaths(dir string) {
	anchor := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	anchorRef := func(ref *connectors.CredentialRef) { connectors.AnchorFileRef(ref, anchor) }
	for i := range f.Clusters {
		c := &f.Clusters[i]
		c.Kubeconfig = anchor(c.Kubeconfig)
		anchorRef(&c.EnrollmentToken)
		if refs, ok := c.Config().(connectors.ReferenceHolder); ok {
			for _, ref := range refs.CredentialRefs() {
				anchorRef(ref)
			}
		}
		if paths, ok := c.Config().(connectors.PathHolder); ok {
			for _, p := range paths.FilePaths() {
				*p = anchor(*p)
			}
		}
		if c.Prometheus != nil {
			anchorRef(&c.Prometheus.BearerToken)
		}
	}
}
