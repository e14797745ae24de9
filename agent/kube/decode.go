package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
)

// Options configure Decode. The zero value is the strictest about kinds and
// the most lenient about fields, as the kubelet reading a static pod.
type Options struct {
	// SkipUnknownKinds skips documents (and List items) of a kind other
	// than Pod, Node or List and records them in Manifests.Skipped. When
	// false they are an error.
	SkipUnknownKinds bool
	// Strict rejects fields that k8s.io/api v0.36 does not know and
	// duplicate keys, which otherwise are dropped (the last key wins).
	Strict bool
}

// Skipped is a document or List item Decode left out.
type Skipped struct {
	Document   int
	Path       string // "items[2]" for a List item, "" for a document
	APIVersion string
	Kind       string
	Name       string
}

// Manifests is what a stream held, in stream order.
type Manifests struct {
	Pods  []pod.Pod
	Nodes []Node
	// ProbePods[i] is what the prober reads of Pods[i] (ConvertProbes).
	ProbePods []prober.Pod
	// PodOrigins[i] and NodeOrigins[i] say where Pods[i] and Nodes[i] were
	// read, so that a caller checking more than one object (two pods with
	// one name, a second Node) names the documents as Decode would.
	PodOrigins  []Origin
	NodeOrigins []Origin
	Skipped     []Skipped
}

// Origin is where an object sits in the stream.
type Origin struct {
	// Document is the 1-based index Error.Document counts.
	Document int
	// Line is the line of the stream where the document starts.
	Line int
	// Item is "items[2]" for an item of a List, "" for a document.
	Item string
	// Kind ("Pod", "Node") and Name (metadata.name, "namespace/name" when
	// the manifest gives a namespace) name the object in errors.
	Kind, Name string
}

// Errorf returns an *Error at a field of the object, the path prefixed
// with the List item as Decode's own errors are.
func (o Origin) Errorf(path, format string, args ...any) error {
	if o.Item != "" {
		if path == "" {
			path = o.Item
		} else {
			path = o.Item + "." + path
		}
	}
	return &Error{Document: o.Document, Line: o.Line, Kind: o.Kind, Name: o.Name, Path: path, Err: fmt.Errorf(format, args...)}
}

// String names the object the way errors do: "document 2" or
// "document 2, items[1]".
func (o Origin) String() string {
	if o.Item == "" {
		return fmt.Sprintf("document %d", o.Document)
	}
	return fmt.Sprintf("document %d, %s", o.Document, o.Item)
}

// Decode reads a stream of YAML or JSON documents separated by "---" lines.
// Empty and comment-only documents are ignored. It stops at the first bad
// document with an *Error naming the document and the field.
func Decode(data []byte, opts Options) (*Manifests, error) {
	out := &Manifests{}
	index := 0
	for _, d := range splitDocuments(data) {
		convert := yaml.YAMLToJSON
		if opts.Strict {
			convert = yaml.YAMLToJSONStrict
		}
		raw, err := convert(d.body)
		if err != nil {
			// A broken document counts, being the one the reader must fix.
			return nil, &Error{Document: index + 1, Line: d.line, Err: streamLines(err, d.line)}
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		index++
		docErr := func(path string, err error) error {
			return &Error{Document: index, Line: d.line, Path: path, Err: err}
		}
		fields, err := decodeGeneric(raw)
		if err != nil {
			return nil, docErr("", err)
		}
		kind, _ := fields["kind"].(string)
		apiVersion, _ := fields["apiVersion"].(string)
		if err := out.add(object{doc: index, line: d.line, raw: raw, fields: fields}, kind, apiVersion, opts); err != nil {
			var inObject *Error
			if errors.As(err, &inObject) {
				return nil, inObject
			}
			path, err := splitFieldError(err)
			return nil, docErr(path, err)
		}
	}
	return out, nil
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

// document is one piece of the stream and the line it starts on.
type document struct {
	line int
	body []byte
}

// splitDocuments cuts the stream at "---" lines. A separator may carry
// content after "--- " on the same line (YAML allows "--- {kind: Pod}"),
// which starts the next document. A "---" inside a block scalar is always
// indented, so a line starting with it is a separator.
func splitDocuments(data []byte) []document {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	var docs []document
	cur := document{line: 1}
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
			cur = document{line: line, body: append([]byte(nil), trimmed[3:]...)}
			cur.body = append(cur.body, '\n')
			continue
		}
		cur.body = append(cur.body, l...)
	}
	return append(docs, cur)
}

func decodeGeneric(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep quantities such as 0.1 or 1e3 exactly as written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("must be a mapping with apiVersion and kind")
	}
	return obj, nil
}

// object is one document or List item: its JSON, the same decoded
// generically (for the kind and the quantities), and where it sits.
type object struct {
	doc    int
	line   int
	prefix string // "" for a document, "items[i]." for a List item
	raw    []byte
	fields map[string]any
}

// add converts one object. kind and apiVersion come from the object, or
// from its typed List (kubectl leaves them out of a PodList's items).
func (out *Manifests) add(o object, kind, apiVersion string, opts Options) error {
	prefix := o.prefix
	if kind == "" {
		return fieldErrorf(prefix+"kind", "must be set")
	}
	isV1 := func() error {
		if apiVersion != "v1" {
			return fieldErrorf(prefix+"apiVersion", "%q is not a version of %s (want v1)", apiVersion, kind)
		}
		return nil
	}
	switch kind {
	case "Pod":
		if err := isV1(); err != nil {
			return err
		}
		origin := o.origin(kind)
		if err := checkQuantities(o.fields, podQuantityPaths); err != nil {
			return origin.wrap(err)
		}
		var p corev1.Pod
		if err := decodeTyped(o.raw, &p, opts.Strict); err != nil {
			return origin.wrap(err)
		}
		conv, err := ConvertPod(&p)
		if err != nil {
			return origin.wrap(err)
		}
		out.Pods = append(out.Pods, conv)
		out.ProbePods = append(out.ProbePods, ConvertProbes(&p))
		out.PodOrigins = append(out.PodOrigins, origin)
	case "Node":
		if err := isV1(); err != nil {
			return err
		}
		origin := o.origin(kind)
		if err := checkQuantities(o.fields, nodeQuantityPaths); err != nil {
			return origin.wrap(err)
		}
		var n corev1.Node
		if err := decodeTyped(o.raw, &n, opts.Strict); err != nil {
			return origin.wrap(err)
		}
		conv, err := ConvertNode(&n)
		if err != nil {
			return origin.wrap(err)
		}
		out.Nodes = append(out.Nodes, conv)
		out.NodeOrigins = append(out.NodeOrigins, origin)
	case "List", "PodList", "NodeList":
		if err := isV1(); err != nil {
			return err
		}
		if prefix != "" {
			return fieldErrorf(prefix+"kind", "a List inside a List is not supported")
		}
		if v, ok := o.fields["items"]; ok && v != nil {
			if _, ok := v.([]any); !ok {
				return fieldErrorf("items", "must be a list")
			}
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := kjson.UnmarshalCaseSensitivePreserveInts(o.raw, &list); err != nil {
			return fieldErrorf("items", "%v", err)
		}
		for i, raw := range list.Items {
			at := fmt.Sprintf("items[%d]", i)
			fields, err := decodeGeneric(raw)
			if err != nil {
				return fieldErrorf(at, "%v", err)
			}
			itemKind, _ := fields["kind"].(string)
			itemVersion, _ := fields["apiVersion"].(string)
			if _, set := fields["kind"]; !set && kind != "List" {
				itemKind, itemVersion = kind[:len(kind)-len("List")], apiVersion
			}
			if err := out.add(object{doc: o.doc, line: o.line, prefix: at + ".", raw: raw, fields: fields}, itemKind, itemVersion, opts); err != nil {
				return err
			}
		}
	default:
		if !opts.SkipUnknownKinds {
			return fieldErrorf(prefix+"kind", "%q is not supported (want Pod, Node or a v1 List of them)", kind)
		}
		meta, _ := o.fields["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		out.Skipped = append(out.Skipped, Skipped{Document: o.doc, Path: stripDot(prefix), APIVersion: apiVersion, Kind: kind, Name: name})
	}
	return nil
}

// origin is where the object sits, named by its kind and by the name
// its metadata gives (read generically, so that a failure of the typed
// decode can still name the object).
func (o object) origin(kind string) Origin {
	meta, _ := o.fields["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if ns, _ := meta["namespace"].(string); ns != "" && name != "" {
		name = ns + "/" + name
	}
	return Origin{Document: o.doc, Line: o.line, Item: stripDot(o.prefix), Kind: kind, Name: name}
}

// wrap turns a conversion error of the object into an *Error naming it; a
// *FieldError's path is relative to the object, so Errorf puts the List
// item in front.
func (o Origin) wrap(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return o.Errorf(fe.Path, "%w", fe.Err)
	}
	return o.Errorf("", "%w", err)
}

func stripDot(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix[:len(prefix)-1]
}

// decodeTyped decodes JSON into a k8s.io/api type the way the API server
// does (sigs.k8s.io/json): field names match case-sensitively, so
// "Metadata" is an unknown field, not metadata. A type mismatch names the
// field path the decoder reports (without list indexes); in strict mode an
// unknown or duplicate field is an error at its full path.
func decodeTyped(raw []byte, into any, strict bool) error {
	var err error
	var strictErrs []error
	if strict {
		strictErrs, err = kjson.UnmarshalStrict(raw, into)
	} else {
		err = kjson.UnmarshalCaseSensitivePreserveInts(raw, into)
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fieldErrorf(te.Field, "cannot be a JSON %s (want %s)", te.Value, te.Type)
		}
		return fieldErrorf("", "%v", err)
	}
	if len(strictErrs) > 0 {
		var fe kjson.FieldError
		if errors.As(strictErrs[0], &fe) {
			// The message is `unknown field "spec.x"`: keep its first words.
			what, _, _ := strings.Cut(fe.Error(), " \"")
			return fieldErrorf(fe.FieldPath(), "%s", what)
		}
		return fieldErrorf("", "%v", strictErrs[0])
	}
	return nil
}

// quantityPath is where resource lists sit in an object: keys to follow,
// with "[]" for every element of a list.
type quantityPath []string

var (
	podQuantityPaths = []quantityPath{
		{"spec", "containers", "[]", "resources", "requests"},
		{"spec", "containers", "[]", "resources", "limits"},
		{"spec", "initContainers", "[]", "resources", "requests"},
		{"spec", "initContainers", "[]", "resources", "limits"},
		{"spec", "overhead"},
		{"spec", "resources", "requests"},
		{"spec", "resources", "limits"},
	}
	nodeQuantityPaths = []quantityPath{
		{"status", "capacity"},
		{"status", "allocatable"},
	}
)

// checkQuantities parses every quantity at the given paths before the typed
// decode, because resource.Quantity's own parse error carries no field path,
// and checks it against QuantityBound with the value as written.
func checkQuantities(obj map[string]any, paths []quantityPath) error {
	for _, qp := range paths {
		if err := walkQuantities("", obj, qp); err != nil {
			return err
		}
	}
	return nil
}

func walkQuantities(at string, v any, rest quantityPath) error {
	join := func(key string) string {
		if at == "" {
			return key
		}
		return at + "." + key
	}
	if len(rest) == 0 {
		list, ok := v.(map[string]any)
		if !ok {
			if v == nil {
				return nil
			}
			return fieldErrorf(at, "must be a mapping of resource names to quantities")
		}
		for _, name := range slices.Sorted(maps.Keys(list)) {
			var s string
			switch q := list[name].(type) {
			case string:
				s = q
			case json.Number:
				s = q.String()
			default:
				return fieldErrorf(keyPath(at, name), "must be a quantity (a string such as \"500m\" or a number)")
			}
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return fieldErrorf(keyPath(at, name), "%q: %v", s, err)
			}
			// The bound is checked on what the user wrote, before the
			// conversion clamps a huge quantity and before defaulting
			// copies a limit into a request.
			if bound := QuantityBound(pod.ResourceName(name)); q.Cmp(bound) > 0 {
				return fieldErrorf(keyPath(at, name), "%s exceeds the bound of %s", s, bound.String())
			}
		}
		return nil
	}
	if rest[0] == "[]" {
		items, ok := v.([]any)
		if !ok {
			return nil // the typed decode reports the wrong type
		}
		for i, it := range items {
			if err := walkQuantities(fmt.Sprintf("%s[%d]", at, i), it, rest[1:]); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	next, ok := m[rest[0]]
	if !ok {
		return nil
	}
	return walkQuantities(join(rest[0]), next, rest[1:])
}
