package starter

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// unknownFields walks the YAML document against the Go type it decodes
// into and names every key the type does not have, at any depth, with its
// line and the nearest known field, and every number or boolean written as
// something else:
//
//	unknown field "idelWindow" in pools[1].policy (line 14); did you mean "idleWindow"?
//	pools[0].policy.maxNodes (line 5): "many" is not a whole number
//
// The JSON decoder behind sigs.k8s.io/yaml would only say
// `json: unknown field "idelWindow"`, without where.
func unknownFields(raw []byte, into reflect.Type) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil
	}
	var errs []error
	walkFields(doc.Content[0], into, "", &errs)
	return errors.Join(errs...)
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

func walkFields(n *yaml.Node, t reflect.Type, path string, errs *[]error) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A type that decodes itself (durations, quantities, enums) is not a
	// tree of fields: decode its scalar here, so a bad value is named by
	// its line and path like a typo is, not by the decoder's bare message.
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		if err := decodeScalar(n, t); err != nil {
			*errs = append(*errs, fmt.Errorf("%s (line %d): %w", orTop(path), n.Line, err))
		}
		return
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!int" && n.ShortTag() != "!!null" {
			*errs = append(*errs, fmt.Errorf("%s (line %d): %q is not a whole number", orTop(path), n.Line, n.Value))
		}
	case reflect.Float32, reflect.Float64:
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!int" && n.ShortTag() != "!!float" && n.ShortTag() != "!!null" {
			*errs = append(*errs, fmt.Errorf("%s (line %d): %q is not a number", orTop(path), n.Line, n.Value))
		}
	case reflect.Bool:
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!bool" && n.ShortTag() != "!!null" {
			*errs = append(*errs, fmt.Errorf("%s (line %d): %q is not true or false", orTop(path), n.Line, n.Value))
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields := jsonFields(t)
		for _, kv := range mappingPairs(n) {
			key, val := kv[0], kv[1]
			ft, ok := lookUpField(fields, key.Value)
			if !ok {
				*errs = append(*errs, unknownField(key, path, fields))
				continue
			}
			walkFields(val, ft, join(path, key.Value), errs)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			walkFields(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), errs)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for _, kv := range mappingPairs(n) {
			walkFields(kv[1], t.Elem(), join(path, kv[0].Value), errs)
		}
	}
}

// decodeScalar decodes one scalar through the type's own UnmarshalJSON,
// as the spec decoder will: a string as a JSON string, a number or a
// boolean as itself. Mappings and sequences are left to that decoder.
func decodeScalar(n *yaml.Node, t reflect.Type) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return nil
	}
	var raw []byte
	switch n.ShortTag() {
	case "!!int", "!!float", "!!bool":
		raw = []byte(n.Value)
	default:
		raw, _ = json.Marshal(n.Value)
	}
	v := reflect.New(t).Interface().(json.Unmarshaler)
	return v.UnmarshalJSON(raw)
}

// mappingPairs lists a mapping's key/value pairs, with YAML merge keys
// (<<: *anchor) expanded the way the decoder expands them.
func mappingPairs(n *yaml.Node) [][2]*yaml.Node {
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if key.Tag == "!!merge" || key.Value == "<<" {
			for val.Kind == yaml.AliasNode {
				val = val.Alias
			}
			sources := []*yaml.Node{val}
			if val.Kind == yaml.SequenceNode {
				sources = val.Content
			}
			for _, s := range sources {
				for s.Kind == yaml.AliasNode {
					s = s.Alias
				}
				if s.Kind == yaml.MappingNode {
					out = append(out, mappingPairs(s)...)
				}
			}
			continue
		}
		out = append(out, [2]*yaml.Node{key, val})
	}
	return out
}

// jsonFields maps a struct's JSON names to their types, inline and
// embedded structs flattened as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if (f.Anonymous && name == "") || strings.Contains(opts, "inline") {
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// lookUpField matches a key the way encoding/json does: exactly, else
// ignoring case.
func lookUpField(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if t, ok := fields[key]; ok {
		return t, true
	}
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}

func unknownField(key *yaml.Node, path string, fields map[string]reflect.Type) error {
	msg := fmt.Sprintf("unknown field %q in %s (line %d)", key.Value, orTop(path), key.Line)
	if near := nearestField(key.Value, fields); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return errors.New(msg)
}

// nearestField is the known name closest to key by edit distance, if it
// is close enough to be the likely intent.
func nearestField(key string, fields map[string]reflect.Type) string {
	best, bestDist := "", -1
	for name := range fields {
		d := editDistance(strings.ToLower(key), strings.ToLower(name))
		if bestDist < 0 || d < bestDist || (d == bestDist && name < best) {
			best, bestDist = name, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len(key)/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance, with a swap of two adjacent
// letters counted as one edit (the commonest typo).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
