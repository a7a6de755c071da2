package clusterconfig

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hanzoai/visor-fleet/connectors"
)

// clusterFields is ClusterSpec without its methods, so decoding it does
// not recurse into UnmarshalJSON.
type clusterFields ClusterSpec

// UnmarshalJSON decodes the common fields strictly and hands each
// provider section to its registered kind, strictly too: an unknown field
// anywhere is an error naming it.
func (c *ClusterSpec) UnmarshalJSON(raw []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return err
	}
	sections := map[string]json.RawMessage{}
	for name, value := range fields {
		if _, ok := connectors.LookupKind(name); ok {
			sections[name] = value
			delete(fields, name)
		}
	}
	common, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	var spec clusterFields
	if err := decodeStrict(common, &spec); err != nil {
		return err
	}
	*c = ClusterSpec(spec)
	for name, value := range sections {
		if bytes.Equal(bytes.TrimSpace(value), []byte("null")) {
			continue
		}
		kind, _ := connectors.LookupKind(name)
		cfg := kind.NewConfig()
		if err := decodeStrict(value, cfg); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if c.Sections == nil {
			c.Sections = map[string]connectors.Config{}
		}
		c.Sections[name] = cfg
	}
	return nil
}

func decodeStrict(raw []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// MarshalJSON writes the sections back under their kinds' names, so a
// spec round-trips.
func (c ClusterSpec) MarshalJSON() ([]byte, error) {
	common, err := json.Marshal(clusterFields(c))
	if err != nil {
		return nil, err
	}
	if len(c.Sections) == 0 {
		return common, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(common, &fields); err != nil {
		return nil, err
	}
	for name, cfg := range c.Sections {
		raw, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		fields[name] = raw
	}
	return json.Marshal(fields)
}
