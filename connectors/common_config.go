package connectors

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hanzoai/visor-fleet/types"
)

// CommonConfig is what every provider section holding a credential has,
// under the same keys: a provider's Config embeds it with plain Go
// embedding, so the clusters file's decoder (encoding/json, strict) reads
// its keys at the top of the section, as before it existed. Keys that are
// alike in meaning but spelled differently per provider (region as
// regionId, region, location or zone; the API endpoint as endpoint or
// baseURL) stay in the provider's own Config: the file format is the
// operators' and does not change.
type CommonConfig struct {
	// Credentials locates the provider's secret (env:, file: or secret:);
	// what the secret holds is the provider's Config to say. It is resolved
	// inside New, on the worker, and never travels as a value.
	Credentials CredentialRef `json:"credentials"`
	// Catalog overrides the provider's built-in catalog (or the one its
	// templates make).
	Catalog []types.InstanceType `json:"catalog,omitempty"`
}

// CheckCommon reports what is wrong in the common part; a provider's
// Validate calls it first. (Not named Validate: promoted, it would let a
// Config without its own Validate pass as checked.)
func (c *CommonConfig) CheckCommon(p Problems) {
	CheckRef(p, "credentials", c.Credentials, true)
	seen := map[string]int{}
	for i, t := range c.Catalog {
		field := fmt.Sprintf("catalog[%d].name", i)
		if t.Name == "" {
			p.Add(field, "is empty; every catalog entry names its size")
		} else if first, dup := seen[t.Name]; dup {
			p.Add(field, "%q is also catalog[%d]; each size is listed once", t.Name, first)
		} else {
			seen[t.Name] = i
		}
	}
}

// CredentialRefs is the common part's reference, for the loader to
// anchor; a Config holding more references lists them all in its own.
func (c *CommonConfig) CredentialRefs() []*CredentialRef {
	return []*CredentialRef{&c.Credentials}
}

// CatalogOr is a copy of the configured catalog, or of builtin when none
// is configured: a caller editing it changes neither.
func (c *CommonConfig) CatalogOr(builtin []types.InstanceType) []types.InstanceType {
	if len(c.Catalog) > 0 {
		return slices.Clone(c.Catalog)
	}
	return slices.Clone(builtin)
}

// JoinConfig is the part of a section whose provider boots stock images:
// the user data (cloud-init, a launch script) that joins a new machine to
// the cluster. It holds a join token, so it is a reference too. Embedded
// beside CommonConfig only by the providers that read it, so no other
// section accepts the key.
type JoinConfig struct {
	ClusterJoin CredentialRef `json:"clusterJoin,omitempty"`
}

// CheckJoin reports a malformed cluster-join reference; empty is allowed
// (an image that joins by itself).
func (j *JoinConfig) CheckJoin(p Problems) {
	CheckRef(p, "clusterJoin", j.ClusterJoin, false)
}

// UserData resolves the cluster-join reference inside the worker; empty
// when none is configured.
func (j *JoinConfig) UserData(ctx context.Context, secrets SecretReader) (string, error) {
	if j.ClusterJoin == "" {
		return "", nil
	}
	return j.ClusterJoin.Resolve(ctx, secrets)
}

// ConfigError is cfg's Validate as one error ("field: problem" each, in
// the order found), or nil. A provider's New checks with it, so a Config
// built in code meets the same rules as a clusters file's section and
// each rule is written once.
func ConfigError(cfg Config) error {
	var errs errorList
	cfg.Validate(&errs)
	return errors.Join(errs...)
}

type errorList []error

func (l *errorList) Add(field, format string, args ...any) {
	*l = append(*l, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}
