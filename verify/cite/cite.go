package cite

import (
	"fmt"
	"strings"
	"unicode"
)

// Kind says what a Source points at, and so how its URL is to be read.
type Kind string

const (
	// KindCode is upstream code at a release tag; URL is a GitHub blob link.
	KindCode Kind = "code"
	// KindAPI is an element of a Kubernetes API definition (a protocol
	// buffer file) at a release tag, whose comments are the API's reference:
	// what each side of it must do. URL is a GitHub blob link.
	KindAPI Kind = "api"
	// KindIssue is a kubernetes/kubernetes issue.
	KindIssue Kind = "issue"
	// KindPR is a kubernetes/kubernetes pull request.
	KindPR Kind = "pr"
	// KindKEP is a Kubernetes enhancement proposal, linked to its tracking issue.
	KindKEP Kind = "kep"
	// KindSeed is a section of one of the seed articles; it has no URL.
	KindSeed Kind = "seed"
	// KindKubernetesDoc is a page of the Kubernetes documentation
	// (kubernetes.io/docs), where the promises to users are written; URL
	// links the page and, with an anchor, the section.
	KindKubernetesDoc Kind = "kubernetes-doc"
	// KindDoc is a nodeproof document; URL is a path relative to the
	// repository root, with an optional #anchor.
	KindDoc Kind = "doc"
)

// KubernetesTag is the release whose kubelet nodeproof reproduces; code
// links point at it, so they never drift as upstream moves on.
const KubernetesTag = "v1.36.3"

// CgroupsLibraryTag is the opencontainers/cgroups release that Kubernetes
// v1.36.3 vendors, which computes the container cpu.weight.
const CgroupsLibraryTag = "v0.0.6"

const (
	kubernetesBlob     = "https://github.com/kubernetes/kubernetes/blob/" + KubernetesTag + "/"
	cgroupsLibraryBlob = "https://github.com/opencontainers/cgroups/blob/" + CgroupsLibraryTag + "/"
	kubernetesIssues   = "https://github.com/kubernetes/kubernetes/issues/"
	kubernetesPulls    = "https://github.com/kubernetes/kubernetes/pull/"
	enhancementIssues  = "https://github.com/kubernetes/enhancements/issues/"
	kubernetesDocs     = "https://kubernetes.io/docs/"
)

// Source is one place an invariant comes from.
type Source struct {
	Kind Kind
	// Text names the source for a reader, complete without the link: the
	// function and file, the issue number, the article and section.
	Text string
	// URL is an absolute https link for upstream kinds, a repository-relative
	// path for KindDoc, and empty for KindSeed.
	URL string
}

// Code cites function (a name such as "ManagerImpl.Allocate" or
// "getPodsToPreempt") in the kubernetes/kubernetes file at path, at
// KubernetesTag. Staging modules are cited by their path in that repository
// (staging/src/k8s.io/...).
func Code(path, function string) Source {
	return Source{Kind: KindCode, Text: function + " in " + path + " at " + KubernetesTag, URL: kubernetesBlob + path}
}

// API cites element (a message, one of its fields, a service or an RPC,
// such as "RegisterRequest.version") of the protocol buffer API definition
// at path in kubernetes/kubernetes, at KubernetesTag: the device plugin
// API's api.proto is the contract a plugin is held to, written in its
// comments. Staging modules are cited by their path in that repository.
func API(path, element string) Source {
	return Source{Kind: KindAPI, Text: element + " in " + path + " at " + KubernetesTag, URL: kubernetesBlob + path}
}

// CgroupsLibrary cites function in the opencontainers/cgroups file at path,
// at CgroupsLibraryTag.
func CgroupsLibrary(path, function string) Source {
	return Source{Kind: KindCode, Text: function + " in opencontainers/cgroups " + path + " at " + CgroupsLibraryTag, URL: cgroupsLibraryBlob + path}
}

// Issue cites kubernetes/kubernetes issue n.
func Issue(n int) Source {
	return Source{Kind: KindIssue, Text: fmt.Sprintf("kubernetes issue #%d", n), URL: fmt.Sprintf("%s%d", kubernetesIssues, n)}
}

// PR cites kubernetes/kubernetes pull request n.
func PR(n int) Source {
	return Source{Kind: KindPR, Text: fmt.Sprintf("kubernetes PR #%d", n), URL: fmt.Sprintf("%s%d", kubernetesPulls, n)}
}

// KubernetesDoc cites section (its heading as the page shows it, or "" for
// the whole page) of the Kubernetes documentation page at path, relative to
// https://kubernetes.io/docs/ ("concepts/workloads/pods/pod-lifecycle/"),
// titled title.
func KubernetesDoc(path, title, section string) Source {
	url := kubernetesDocs + path
	text := "Kubernetes documentation, " + title
	if section != "" {
		url += "#" + HeadingAnchor(section)
		text += ", section '" + section + "'"
	}
	return Source{Kind: KindKubernetesDoc, Text: text, URL: url}
}

// KEPSection cites section of Kubernetes enhancement proposal n, titled
// title, through its tracking issue in kubernetes/enhancements.
func KEPSection(n int, title, section string) Source {
	s := KEP(n, title)
	s.Text += ", section '" + section + "'"
	return s
}

// KEP cites Kubernetes enhancement proposal n, titled title, through its
// tracking issue in kubernetes/enhancements.
func KEP(n int, title string) Source {
	return Source{Kind: KindKEP, Text: fmt.Sprintf("KEP-%d (%s)", n, title), URL: fmt.Sprintf("%s%d", enhancementIssues, n)}
}

// Seed cites a section of a seed article. The articles are not public, so
// the article is named by its subject and the section by its title in
// English; there is no link.
func Seed(subject, section string) Source {
	return Source{Kind: KindSeed, Text: "Seed article on " + subject + ", section '" + section + "'"}
}

// Doc cites section (a heading, or "" for the whole document) of the
// nodeproof document at path, relative to the repository root.
func Doc(path, section string) Source {
	if section == "" {
		return Source{Kind: KindDoc, Text: "nodeproof " + path, URL: path}
	}
	return Source{Kind: KindDoc, Text: "nodeproof " + path + ", section '" + section + "'", URL: path + "#" + HeadingAnchor(section)}
}

// Noting adds a remark to the text, such as the state of an open issue.
func (s Source) Noting(note string) Source {
	s.Text += " (" + note + ")"
	return s
}

// Linked says whether the URL is an absolute link, which the report can show
// as one; a document's repository-relative path is not, since the report may
// be read far from the repository.
func (s Source) Linked() bool { return strings.HasPrefix(s.URL, "https://") }

// Join renders sources as one line of text, for places that want a string.
func Join(sources []Source) string {
	texts := make([]string, len(sources))
	for i, s := range sources {
		texts[i] = s.Text
	}
	return strings.Join(texts, "; ")
}

// HeadingAnchor is the fragment GitHub gives a Markdown heading: lower case,
// spaces as hyphens, and every character other than letters, digits, hyphens
// and underscores dropped.
func HeadingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// DeterminismContract and BadInput are the sections of nodeproof's
// architecture notes that every suite's determinism and bad-input invariants
// rest on.
var (
	DeterminismContract = Doc("docs/architecture.md", "The determinism contract of core/")
	BadInput            = Doc("docs/architecture.md", "Bad input")
)
