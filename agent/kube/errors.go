package kube

import "fmt"

// FieldError is a conversion failure at one field of an object, with the
// field's path as the API server writes it ("spec.containers[0].name"); a
// resource name that is not a plain word is written as a key
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

func fieldErrorf(path, format string, args ...any) error {
	return &FieldError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Error is a failure to decode one document of a manifest stream.
type Error struct {
	// Document is the 1-based index among the documents that hold
	// something (comment-only and empty documents are not counted).
	Document int
	// Line is the line of the stream where the document starts, 1-based.
	Line int
	// Path is the field path within the document ("" when the failure is
	// not at a field, such as a YAML syntax error). Items of a List are
	// prefixed with "items[i].".
	Path string
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("document %d: %v", e.Document, e.Err)
	}
	return fmt.Sprintf("document %d: %s: %v", e.Document, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
