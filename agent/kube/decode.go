package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeproof/nodeproof/agent/manifest"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/prober"
)

// Options configure Decode. Fields are always read strictly; the zero
// value is the strictest about kinds too.
type Options struct {
	// SkipUnknownKinds skips documents (and List items) of a kind other
	// than Pod, Node or List and records them in Manifests.Skipped. When
	// false they are an error.
	SkipUnknownKinds bool
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
	Pods []pod.Pod
	// ProberPods[i] is Pods[i] as the kubelet's prober reads it
	// (ConvertProberPod): probes as written, not yet defaulted.
	ProberPods []prober.Pod
	Nodes      []Node
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

// Decode reads a stream of YAML or JSON documents separated by "---" lines,
// strictly (agent/manifest): a field that k8s.io/api v0.36 does not know, a
// key repeated within a mapping and a value of the wrong type are errors.
// Empty and comment-only documents are ignored. It stops at the first bad
// document with an *Error naming the document and the field.
func Decode(data []byte, opts Options) (*Manifests, error) {
	out := &Manifests{}
	index := 0
	for _, d := range manifest.Split(data) {
		raw, duplicate, err := d.JSON()
		if err != nil {
			// A broken document counts, being the one the reader must fix.
			return nil, &Error{Document: index + 1, Line: d.Line, Err: err}
		}
		if raw == nil {
			continue
		}
		index++
		docErr := func(path string, err error) error {
			return &Error{Document: index, Line: d.Line, Path: path, Err: err}
		}
		fields, err := decodeGeneric(raw)
		if err != nil {
			return nil, docErr("", err)
		}
		kind, _ := fields["kind"].(string)
		apiVersion, _ := fields["apiVersion"].(string)
		o := object{doc: index, line: d.Line, raw: raw, fields: fields, duplicate: duplicate}
		if err := out.add(o, kind, apiVersion, opts); err != nil {
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
	// duplicate is the document's repeated key, if it has one, which the
	// object that holds it reports, so that the error names the object.
	duplicate *manifest.FieldError
}

// duplicateIn is the document's repeated key if it lies in this object,
// with its path in the document.
func (o object) duplicateIn() *manifest.FieldError {
	if o.duplicate == nil || !strings.HasPrefix(o.duplicate.Path, o.prefix) {
		return nil
	}
	return o.duplicate
}

// duplicateError is the object's repeated key as an error of the object.
func (o object) duplicateError(origin Origin) error {
	if dup := o.duplicateIn(); dup != nil {
		return origin.Errorf(strings.TrimPrefix(dup.Path, o.prefix), "%w", dup.Err)
	}
	return nil
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
		if err := o.duplicateError(origin); err != nil {
			return err
		}
		if err := checkQuantities(o.fields, podQuantityPaths); err != nil {
			return origin.wrap(err)
		}
		var p corev1.Pod
		if err := manifest.Decode(o.raw, &p); err != nil {
			return origin.wrap(err)
		}
		conv, err := ConvertPod(&p)
		if err != nil {
			return origin.wrap(err)
		}
		out.Pods = append(out.Pods, conv)
		out.ProberPods = append(out.ProberPods, ConvertProberPod(&p))
		out.PodOrigins = append(out.PodOrigins, origin)
	case "Node":
		if err := isV1(); err != nil {
			return err
		}
		origin := o.origin(kind)
		if err := o.duplicateError(origin); err != nil {
			return err
		}
		if err := checkQuantities(o.fields, nodeQuantityPaths); err != nil {
			return origin.wrap(err)
		}
		var n corev1.Node
		if err := manifest.Decode(o.raw, &n); err != nil {
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
		var list metav1.List
		if err := manifest.Decode(o.raw, &list); err != nil {
			return err
		}
		for i, item := range list.Items {
			at := fmt.Sprintf("items[%d]", i)
			if item.Raw == nil {
				item.Raw = []byte("null") // RawExtension keeps a null item as no bytes
			}
			fields, err := decodeGeneric(item.Raw)
			if err != nil {
				return fieldErrorf(at, "%v", err)
			}
			itemKind, _ := fields["kind"].(string)
			itemVersion, _ := fields["apiVersion"].(string)
			if _, set := fields["kind"]; !set && kind != "List" {
				itemKind, itemVersion = kind[:len(kind)-len("List")], apiVersion
			}
			item := object{doc: o.doc, line: o.line, prefix: at + ".", raw: item.Raw, fields: fields, duplicate: o.duplicate}
			if err := out.add(item, itemKind, itemVersion, opts); err != nil {
				return err
			}
		}
		// Every item has reported a repeated key of its own: one left is
		// the List's.
		if dup := o.duplicateIn(); dup != nil {
			return dup
		}
	default:
		// A repeated key breaks the YAML of a document of any kind.
		if dup := o.duplicateIn(); dup != nil {
			return dup
		}
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
				return fieldErrorf(manifest.KeyPath(at, name), "must be a quantity (a string such as \"500m\" or a number)")
			}
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return fieldErrorf(manifest.KeyPath(at, name), "%q: %v", s, err)
			}
			// The bound is checked on what the user wrote, before the
			// conversion clamps a huge quantity and before defaulting
			// copies a limit into a request.
			if bound := QuantityBound(pod.ResourceName(name)); q.Cmp(bound) > 0 {
				return fieldErrorf(manifest.KeyPath(at, name), "%s exceeds the bound of %s", s, bound.String())
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
