package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	kjson "sigs.k8s.io/json"
)

// Decode decodes the JSON of one document into v, a pointer, as the API
// server's strict field validation does (sigs.k8s.io/json UnmarshalStrict):
// field names match case-sensitively, so "Metadata" is not metadata, and
// a field v's type does not know is an error. A failure at a field is a
// *FieldError at its path; the first is returned.
func Decode(raw []byte, v any) error {
	strictErrs, err := kjson.UnmarshalStrict(raw, v)
	if err != nil {
		if fe := misfit(raw, reflect.TypeOf(v).Elem(), ""); fe != nil {
			return fe
		}
		// Every value fits its field alone: the decoder's own words.
		return &FieldError{Err: err}
	}
	if len(strictErrs) > 0 {
		var fe kjson.FieldError
		if errors.As(strictErrs[0], &fe) {
			// The message is `unknown field "spec.x"` (or duplicate
			// field): keep the rule, the path goes in front.
			rule, _, _ := strings.Cut(fe.Error(), " \"")
			return &FieldError{Path: fe.FieldPath(), Err: errors.New(rule)}
		}
		return &FieldError{Err: strictErrs[0]}
	}
	return nil
}

// DecodeOne reads a file that holds one document (a campaign plan)
// strictly into v: the document's repeated keys, then Decode's rules.
// Documents that hold nothing (comments only) are passed over; a second
// document is an error, since the reader would otherwise drop it.
func DecodeOne(data []byte, v any) error {
	documents := 0
	for _, d := range Split(data) {
		raw, duplicate, err := d.JSON()
		switch {
		case err != nil:
			return err
		case raw == nil:
			continue
		}
		documents++
		switch {
		case documents > 1:
			return fmt.Errorf("document %d (line %d): the file must hold one document", documents, d.Line)
		case duplicate != nil:
			return duplicate
		}
		if err := Decode(raw, v); err != nil {
			return err
		}
	}
	if documents == 0 {
		return errors.New("holds no document")
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// misfit is the first value of raw that does not decode into its field of
// type t, at its path; keys are taken in sorted order, the order of the
// JSON sigs.k8s.io/yaml writes and the decoder reads. A decoding error names
// the field without list indexes ("spec.containers.livenessProbe.
// periodSeconds", with the names of embedded Go structs), and an error of
// a type's own UnmarshalJSON (a time, a quantity, a port that is an int or
// a string) names none. It is nil when every value fits, and looks only at
// the fields t knows: the strict check names the others.
func misfit(raw json.RawMessage, t reflect.Type, path string) *FieldError {
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw)
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			// The type's own decoding names what it wanted inside; what
			// it takes as a whole (an int or a string) is its own.
			return &FieldError{Path: path, Err: fmt.Errorf("cannot be %s", describeValue(te.Value))}
		case err != nil:
			return &FieldError{Path: path, Err: err}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return misfit(raw, t.Elem(), path)
	case reflect.Struct, reflect.Map:
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return mismatch(path, t, err)
		}
		for _, key := range slices.Sorted(maps.Keys(fields)) {
			ft, known := t, true
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else {
				ft, known = fieldType(t, key)
			}
			if !known {
				continue
			}
			if fe := misfit(fields[key], ft, KeyPath(path, key)); fe != nil {
				return fe
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			break // []byte is a base64 string
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return mismatch(path, t, err)
		}
		for i, item := range items {
			if fe := misfit(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); fe != nil {
				return fe
			}
		}
		return nil
	}
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
		return mismatch(path, t, err)
	}
	return nil
}

// mismatch says that the value at path is not of type t.
func mismatch(path string, t reflect.Type, err error) *FieldError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &FieldError{Path: path, Err: fmt.Errorf("must be %s, not %s", describeType(t), describeValue(te.Value))}
	}
	return &FieldError{Path: path, Err: err}
}

// fieldType is the type of the field of struct t that JSON names key, as
// encoding/json finds it: a field of t itself before one of a struct t
// embeds without a name (metav1.TypeMeta's apiVersion in a Pod).
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		inner := f.Type
		if inner.Kind() == reflect.Pointer {
			inner = inner.Elem()
		}
		switch {
		case name == "-": // never decoded
		case f.Anonymous && name == "" && inner.Kind() == reflect.Struct:
			embedded = append(embedded, inner)
		case !f.IsExported():
		case name == key, name == "" && f.Name == key:
			return f.Type, true
		}
	}
	for _, e := range embedded {
		if ft, ok := fieldType(e, key); ok {
			return ft, true
		}
	}
	return nil, false
}

// describeType says what a Go type takes in YAML words.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("an integer (%s)", t)
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// describeValue says what UnmarshalTypeError.Value found, in YAML words.
func describeValue(value string) string {
	switch value {
	case "object":
		return "a mapping"
	case "array":
		return "a list"
	case "bool":
		return "a boolean"
	case "string", "number":
		return "a " + value
	}
	// "number 1.5": a number the type cannot hold.
	return "the " + value
}
