package spec

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"benchlab/internal/workload"
)

// decodeOptions reads every suite's options from the file into w: first the
// keys older files wrote directly under [workload] (workload.FlatKeys), then
// each suite's own table [workload.<suite>], which wins. It returns the
// unknown keys under [workload]: neither shared, nor an option of a suite,
// nor a suite's table.
func decodeOptions(src []byte, file string, w *Workload) ([]string, error) {
	var raw struct {
		Workload map[string]toml.Primitive `toml:"workload"`
	}
	md, err := toml.Decode(string(src), &raw)
	if err != nil {
		return nil, tomlError(file, err)
	}
	shared := tomlKeys(reflect.TypeOf(Workload{}))
	if w.options == nil {
		w.options = map[string]workload.Options{}
	}
	var unknown, tables []string
	for _, key := range slices.Sorted(maps.Keys(raw.Workload)) {
		if shared[key] {
			continue
		}
		if _, ok := lookupConfigurable(key); ok {
			tables = append(tables, key)
			continue
		}
		claimed := false
		for _, name := range slices.Sorted(maps.Keys(w.options)) {
			o := w.options[name]
			fk, ok := o.(workload.FlatKeys)
			if !ok || !slices.Contains(fk.FlatKeys(), key) {
				continue
			}
			dst, ok := fieldByKey(o, key)
			if !ok {
				panic(fmt.Sprintf("spec: the %s suite's flat key %q names no option", name, key))
			}
			if err := md.PrimitiveDecode(raw.Workload[key], dst); err != nil {
				return nil, errf("workload."+key, "%v (this field is the %s suite's; its place is now [workload.%s])",
					cleanTOMLError(err), name, name)
			}
			claimed = true
		}
		if !claimed {
			unknown = append(unknown, "workload."+key)
		}
	}
	for _, name := range tables {
		o, ok := w.options[name]
		if !ok {
			c, _ := lookupConfigurable(name)
			o = c.NewOptions()
			w.options[name] = o
		}
		if err := md.PrimitiveDecode(raw.Workload[name], o); err != nil {
			return nil, errf("workload."+name, "%v", cleanTOMLError(err))
		}
	}
	for _, k := range md.Undecoded() {
		if len(k) > 2 && k[0] == "workload" && slices.Contains(tables, k[1]) {
			unknown = append(unknown, k.String())
		}
	}
	return unknown, nil
}

// cleanTOMLError keeps the message of a decoding error, with its line when
// the decoder gives one.
func cleanTOMLError(err error) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)
	}
	return strings.TrimPrefix(err.Error(), "toml: ")
}

// encodeOptions renders o as the table [workload.<suite>].
func encodeOptions(suite string, o workload.Options) (string, error) {
	var b bytes.Buffer
	err := toml.NewEncoder(&b).Encode(map[string]any{"workload": map[string]any{suite: o}})
	if err != nil {
		return "", err
	}
	// The encoder opens the parent table, which the shared fields already
	// opened; a second [workload] header would be a redefinition.
	return strings.TrimPrefix(b.String(), "[workload]\n"), nil
}

// tomlKeys returns the TOML keys of struct type t's fields.
func tomlKeys(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = true
	}
	return out
}

// fieldByKey returns a pointer to the field of the struct o points to whose
// TOML key is key.
func fieldByKey(o any, key string) (any, bool) {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	v = v.Elem()
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("toml"), ",")
		if name == key {
			return v.Field(i).Addr().Interface(), true
		}
	}
	return nil, false
}
