package kube

import (
	"fmt"
	"strings"

	"github.com/nodeproof/nodeproof/agent/manifest"
)

// FieldError is a failure at one field of an object, with the field's path
// as the API server writes it ("spec.containers[0].name"); a resource name
// that is not a plain word is written as a key ("limits[example.com/gpu]").
// It is agent/manifest's, so that the strict reading's errors and the
// conversion's are one type.
type FieldError = manifest.FieldError

func fieldErrorf(path, format string, args ...any) error {
	return &FieldError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Error is a failure to decode one document of a manifest stream, or a
// rule about an object a caller checks (Origin.Errorf).
type Error struct {
	// Document is the 1-based index among the documents that hold
	// something (comment-only and empty documents are not counted).
	Document int
	// Line is the line of the stream where the document starts, 1-based.
	Line int
	// Kind and Name say which object the failure is in: "Pod" and its
	// metadata.name, with "namespace/" in front when the manifest gives a
	// namespace. Kind is empty when the failure is not inside a Pod or a
	// Node (a YAML syntax error, a missing or unknown kind); Name is empty
	// when the object has none.
	Kind, Name string
	// Path is the field path within the document ("" when the failure is
	// not at a field, such as a YAML syntax error), as written in the
	// manifest. Items of a List are prefixed with "items[i].".
	Path string
	Err  error
}

// Error reads `pod "web" (document 2): spec.containers[0].name: ...`, or
// `document 2: ...` where the object is unknown.
func (e *Error) Error() string {
	where := fmt.Sprintf("document %d", e.Document)
	switch {
	case e.Kind != "" && e.Name != "":
		where = fmt.Sprintf("%s %q (%s)", strings.ToLower(e.Kind), e.Name, where)
	case e.Kind != "":
		where = fmt.Sprintf("%s (%s)", strings.ToLower(e.Kind), where)
	}
	if e.Path == "" {
		return fmt.Sprintf("%s: %v", where, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", where, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
