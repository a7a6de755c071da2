package clusterconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/hanzoai/visor-fleet/connectors"
	"github.com/hanzoai/visor-fleet/connectors/aws"
	"github.com/hanzoai/visor-fleet/connectors/digitalocean"
	"github.com/hanzoai/visor-fleet/connectors/hetzner"
	"github.com/hanzoai/visor-fleet/connectors/vsphere"
)

// Provider kinds a cluster can name.
const (
	DigitalOcean = digitalocean.ProviderName
	AWS          = aws.ProviderName
	Hetzner      = hetzner.ProviderName
	VSphere      = vsphere.ProviderName
	Sim          = "sim"
)

// Providers lists the kinds in the order error messages name them.
var Providers = []string{DigitalOcean, AWS, Hetzner, VSphere, Sim}

// File is a worker's clusters file.
type File struct {
	// Path is where the file was read from, for error messages.
	Path     string        `json:"-"`
	Clusters []ClusterSpec `json:"clusters"`
}

// ClusterSpec is one cluster: how to reach its Kubernetes API and its
// provider. Exactly the section named by Provider is set.
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

	DigitalOcean *digitalocean.Config `json:"digitalocean,omitempty"`
	AWS          *aws.Config          `json:"aws,omitempty"`
	Hetzner      *hetzner.Config      `json:"hetzner,omitempty"`
	VSphere      *vsphere.Config      `json:"vsphere,omitempty"`
	Sim          *SimConfig           `json:"sim,omitempty"`

	// Prometheus, when set, is where node usage comes from instead of
	// metrics-server.
	Prometheus *PrometheusUsage `json:"prometheus,omitempty"`

	// Informers makes the observer sample a watch-fed cache of pods and
	// pool nodes instead of listing them at every sample: a few requests a
	// worker's lifetime instead of a node list and every pod page per
	// sample. The connector then needs watch on pods and nodes, as the
	// shipped ClusterRole grants. Ignored for the sim.
	Informers bool `json:"informers,omitempty"`
}

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
	anchorRef := func(ref *connectors.CredentialRef) {
		if rest, ok := strings.CutPrefix(string(*ref), refFile); ok {
			*ref = connectors.CredentialRef(refFile + anchor(rest))
		}
	}
	for i := range f.Clusters {
		c := &f.Clusters[i]
		c.Kubeconfig = anchor(c.Kubeconfig)
		anchorRef(&c.EnrollmentToken)
		switch {
		case c.DigitalOcean != nil:
			anchorRef(&c.DigitalOcean.Credentials)
		case c.AWS != nil:
			anchorRef(&c.AWS.Credentials)
		case c.Hetzner != nil:
			anchorRef(&c.Hetzner.Credentials)
			anchorRef(&c.Hetzner.ClusterJoin)
		case c.VSphere != nil:
			anchorRef(&c.VSphere.Credentials)
		case c.Sim != nil:
			c.Sim.StatePath = anchor(c.Sim.StatePath)
		}
		if c.Prometheus != nil {
			anchorRef(&c.Prometheus.BearerToken)
		}
	}
}
