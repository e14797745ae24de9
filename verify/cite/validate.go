package cite

import (
	"bufio"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

// besideTheRepository are texts that point at files kept only beside the
// repository (the spec, the seeds, the design notes), which a reviewer of the
// repository cannot open.
var besideTheRepository = []string{"spec/", "spec §", "seeds/", "seed 00", "DESIGN.md"}

var (
	codeURL  = regexp.MustCompile(`^(` + regexp.QuoteMeta(kubernetesBlob) + `|` + regexp.QuoteMeta(cgroupsLibraryBlob) + `)[A-Za-z0-9_./-]+\.go$`)
	apiURL   = regexp.MustCompile(`^` + regexp.QuoteMeta(kubernetesBlob) + `[A-Za-z0-9_./-]+\.proto$`)
	issueURL = regexp.MustCompile(`^` + regexp.QuoteMeta(kubernetesIssues) + `[1-9][0-9]*$`)
	prURL    = regexp.MustCompile(`^` + regexp.QuoteMeta(kubernetesPulls) + `[1-9][0-9]*$`)
	kepURL   = regexp.MustCompile(`^` + regexp.QuoteMeta(enhancementIssues) + `[1-9][0-9]*$`)
	// A documentation page: lower-case path segments, each ending in a slash,
	// with an optional anchor. A segment may hold a dot, as the API and
	// configuration references' do (kubelet-config.v1beta1/).
	kubernetesDocURL = regexp.MustCompile(`^` + regexp.QuoteMeta(kubernetesDocs) + `([a-z0-9.-]+/)+(#[a-z0-9_-]+)?$`)
)

// Validate reports the first rule s breaks, naming the field; repo is the
// repository root, in which a document's path must exist and its anchor
// must name a heading.
func (s Source) Validate(repo fs.FS) error {
	if strings.TrimSpace(s.Text) == "" {
		return fmt.Errorf("source %s %q: text is empty; it must name the source without the link", s.Kind, s.URL)
	}
	// Square brackets would end the text of a Markdown link early.
	if strings.ContainsAny(s.Text, "[]\n") {
		return fmt.Errorf("source %q: text must not contain square brackets or a newline", s.Text)
	}
	for _, beside := range besideTheRepository {
		if strings.Contains(s.Text, beside) || strings.Contains(s.URL, beside) {
			return fmt.Errorf("source %q: mentions %q, which exists only beside the repository; cite the upstream code, issue or seed section instead", s.Text, beside)
		}
	}
	switch s.Kind {
	case KindCode:
		return s.matchURL(codeURL, "a .go file at "+kubernetesBlob+" or "+cgroupsLibraryBlob)
	case KindAPI:
		return s.matchURL(apiURL, "a .proto file at "+kubernetesBlob)
	case KindIssue:
		return s.matchURL(issueURL, kubernetesIssues+"N")
	case KindPR:
		return s.matchURL(prURL, kubernetesPulls+"N")
	case KindKEP:
		return s.matchURL(kepURL, enhancementIssues+"N")
	case KindKubernetesDoc:
		return s.matchURL(kubernetesDocURL, kubernetesDocs+"<page>/")
	case KindSeed:
		if s.URL != "" {
			return fmt.Errorf("source %q: url %q: a seed section has no link, the articles are not public", s.Text, s.URL)
		}
		if !strings.HasPrefix(s.Text, "Seed article on ") || !strings.Contains(s.Text, ", section '") {
			return fmt.Errorf("source %q: text must read \"Seed article on <subject>, section '<title in English>'\"", s.Text)
		}
		return nil
	case KindDoc:
		return s.validateDoc(repo)
	default:
		return fmt.Errorf("source %q: kind %q is not one of code, api, issue, pr, kep, kubernetes-doc, seed, doc", s.Text, s.Kind)
	}
}

func (s Source) matchURL(pattern *regexp.Regexp, want string) error {
	if !pattern.MatchString(s.URL) {
		return fmt.Errorf("source %q: url %q: a source of kind %s must link to %s", s.Text, s.URL, s.Kind, want)
	}
	return nil
}

func (s Source) validateDoc(repo fs.FS) error {
	file, anchor, _ := strings.Cut(s.URL, "#")
	if file == "" || !fs.ValidPath(file) || strings.Contains(s.URL, "://") {
		return fmt.Errorf("source %q: url %q: a doc source must be a path relative to the repository root, without .. or a scheme", s.Text, s.URL)
	}
	f, err := repo.Open(file)
	if err != nil {
		return fmt.Errorf("source %q: url %q: the document does not exist in the repository: %v", s.Text, s.URL, err)
	}
	defer f.Close()
	if anchor == "" {
		return nil
	}
	if path.Ext(file) != ".md" {
		return fmt.Errorf("source %q: url %q: an anchor needs a Markdown document", s.Text, s.URL)
	}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if heading, ok := strings.CutPrefix(lines.Text(), "#"); ok && HeadingAnchor(strings.TrimLeft(heading, "#")) == anchor {
			return nil
		}
	}
	if err := lines.Err(); err != nil {
		return fmt.Errorf("source %q: reading %s: %v", s.Text, file, err)
	}
	return fmt.Errorf("source %q: url %q: %s has no heading whose anchor is #%s", s.Text, s.URL, file, anchor)
}
