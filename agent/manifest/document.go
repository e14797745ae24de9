package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// Document is one document of a stream and where it starts.
type Document struct {
	// Line is the line of the stream the document starts on, 1-based.
	Line int
	Text []byte
}

// Split cuts the stream at "---" lines. A separator may carry content
// after "--- " on the same line (YAML allows "--- {kind: Pod}"), which
// starts the next document. A "---" inside a block scalar is always
// indented, so a line starting with it is a separator.
func Split(data []byte) []Document {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	var docs []Document
	cur := Document{Line: 1}
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i+1], data[i+1:]
		} else {
			l, data = data, nil
		}
		trimmed := bytes.TrimRight(l, "\r\n")
		if bytes.HasPrefix(trimmed, []byte("---")) && (len(trimmed) == 3 || trimmed[3] == ' ' || trimmed[3] == '\t') {
			docs = append(docs, cur)
			cur = Document{Line: line, Text: append([]byte(nil), trimmed[3:]...)}
			cur.Text = append(cur.Text, '\n')
			continue
		}
		cur.Text = append(cur.Text, l...)
	}
	return append(docs, cur)
}

// JSON converts the document to JSON with sigs.k8s.io/yaml. It returns
// nil JSON for a document that holds nothing (empty, comments only, or
// null), and a YAML syntax error with its line counted from the start of
// the stream.
//
// A key repeated within a mapping comes back apart, as duplicate, beside
// the JSON the conversion makes of it (where the last value wins): the
// caller then knows the object that holds the key, and names it in the
// error. Keys are compared as JSON names them, so 1 and "1" are one key.
func (d Document) JSON() (raw []byte, duplicate *FieldError, err error) {
	raw, err = yaml.YAMLToJSON(d.Text)
	if err != nil {
		return nil, nil, streamLines(err, d.Line)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	return raw, duplicateKey(d.Text), nil
}

// duplicateKey is the first key of the document, in document order, that
// repeats an earlier key of its mapping. yaml.v2 decodes a mapping into a
// MapSlice with every key it holds, so the walk sees what the conversion
// to JSON dropped.
func duplicateKey(text []byte) *FieldError {
	var doc yamlv2.MapSlice
	if err := yamlv2.Unmarshal(text, &doc); err != nil {
		// A document that is not a mapping has no keys to repeat; the
		// decoding into a type refuses it.
		return nil
	}
	return duplicateIn("", doc)
}

func duplicateIn(path string, v any) *FieldError {
	switch v := v.(type) {
	case yamlv2.MapSlice:
		seen := make(map[string]bool, len(v))
		for _, item := range v {
			key := fmt.Sprint(item.Key)
			at := KeyPath(path, key)
			if seen[key] {
				return &FieldError{Path: at, Err: errors.New("duplicate key")}
			}
			seen[key] = true
			if fe := duplicateIn(at, item.Value); fe != nil {
				return fe
			}
		}
	case []any:
		for i, item := range v {
			if fe := duplicateIn(fmt.Sprintf("%s[%d]", path, i), item); fe != nil {
				return fe
			}
		}
	}
	return nil
}

var yamlLine = regexp.MustCompile(`\bline (\d+)`)

// streamLines turns the YAML parser's line numbers, which count from the
// document's first line, into lines of the whole stream.
func streamLines(err error, docLine int) error {
	msg := yamlLine.ReplaceAllStringFunc(err.Error(), func(m string) string {
		n, convErr := strconv.Atoi(m[len("line "):])
		if convErr != nil {
			return m
		}
		return "line " + strconv.Itoa(n+docLine-1)
	})
	return errors.New(msg)
}
