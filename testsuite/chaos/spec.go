package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/hanzoai/visor-fleet/starter"
)

// chaosSpec is the run's spec file: its text, to write variants of, and
// what it declares, to check against.
type chaosSpec struct {
	path string
	raw  []byte
	spec starter.SpecFile
}

// loadChaosSpec reads and validates the spec file. It must turn faults on
// and give every pool a floor: the ledger's no-gap check assumes a pool
// has nodes, so something to meter, in every hour it lives.
func loadChaosSpec(path string) (chaosSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return chaosSpec{}, fmt.Errorf("spec: %w", err)
	}
	spec, err := starter.ParseSpecFile(path, raw)
	if err != nil {
		return chaosSpec{}, err
	}
	var errs []error
	if len(spec.Faults) == 0 {
		errs = append(errs, fmt.Errorf("%s: no faults section: a chaos run needs provider faults", path))
	}
	for i, p := range spec.Pools {
		if p.Policy.MinNodes < 1 {
			errs = append(errs, fmt.Errorf("%s: pools[%d] (%s): policy.minNodes is %d; the chaos checks need at least 1", path, i, p.Key.WorkflowID(), p.Policy.MinNodes))
		}
	}
	if len(spec.Pools) == 0 {
		errs = append(errs, fmt.Errorf("%s: no pools", path))
	}
	if err := errors.Join(errs...); err != nil {
		return chaosSpec{}, err
	}
	return chaosSpec{path: path, raw: raw, spec: spec}, nil
}

// withSeeds is the spec with each faulted cluster's seed replaced by
// base+i (i the cluster's place in the faults section), so every restart
// draws a fresh sequence of faults instead of replaying the first one.
func (c chaosSpec) withSeeds(base int64) ([]byte, error) {
	return c.edit(func(faults *yaml.Node) {
		for i := 0; i+1 < len(faults.Content); i += 2 {
			setScalar(faults.Content[i+1], "seed", strconv.FormatInt(base+int64(i/2), 10))
		}
	}, false)
}

// withoutFaults is the spec with its faults section removed: the final
// run lets the pools settle on a well-behaved cloud.
func (c chaosSpec) withoutFaults() ([]byte, error) {
	return c.edit(nil, true)
}

// edit rewrites the top-level faults mapping (or drops it) and checks the
// result still parses as a spec file.
func (c chaosSpec) edit(change func(faults *yaml.Node), drop bool) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(c.raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: the spec file is not a mapping", c.path)
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "faults" {
			continue
		}
		if drop {
			top.Content = append(top.Content[:i:i], top.Content[i+2:]...)
			break
		}
		if faults := top.Content[i+1]; faults.Kind == yaml.MappingNode && change != nil {
			change(faults)
		}
		break
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("%s: rewrite: %w", c.path, err)
	}
	if _, err := starter.ParseSpecFile(c.path+" (rewritten)", out.Bytes()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// setScalar sets key to an integer value in a mapping node, adding it if absent.
func setScalar(m *yaml.Node, key, value string) {
	if m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1].Value, m.Content[i+1].Tag = value, "!!int"
			return
		}
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: value})
}
