package manifest

import "regexp"

// FieldError is a failure at one field of a document, with the field's
// path as the API server writes it ("spec.containers[0].name"); a mapping
// key that is not a plain word is written in brackets
// ("limits[example.com/gpu]").
type FieldError struct {
	Path string
	Err  error
}

func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// KeyPath appends a mapping key to path: ".cpu" for a plain word,
// "[example.com/gpu]" for a key a dot would make ambiguous.
func KeyPath(path, key string) string {
	switch {
	case !plainKey.MatchString(key):
		return path + "[" + key + "]"
	case path == "":
		return key
	}
	return path + "." + key
}
