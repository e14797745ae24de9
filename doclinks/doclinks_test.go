package doclinks

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/stretchr/testify/require"
)

// TestRepositoryLinks checks every Markdown file of the module. The test runs
// in doclinks/, so the module root is its parent.
func TestRepositoryLinks(t *testing.T) {
	root := os.DirFS("..")
	files, err := markdownFiles(root)
	require.NoError(t, err)
	require.Contains(t, files, "README.md", "the walk must reach the README, or it checks nothing")

	problems, err := checkLinks(root, files)
	require.NoError(t, err)
	if len(problems) > 0 {
		t.Errorf("%d broken Markdown links (paths relative to the repository root):\n%s",
			len(problems), strings.Join(problems, "\n"))
	}
}

// TestCheckerReportsBrokenLinks shows that the checker can fail: one tree with
// a good link of every kind and a broken link of every kind.
func TestCheckerReportsBrokenLinks(t *testing.T) {
	tree := fstest.MapFS{
		"README.md": {Data: []byte(strings.Join([]string{
			"# nodeproof", // 1
			"",            // 2
			"[report](docs/commands/report.md) and [the flags](docs/commands/report.md#flags).",   // 3
			"[gone](docs/commands/gone.md), [no anchor](docs/commands/report.md#no-such-heading)", // 4
			"![screenshot](docs/report.png) [web](https://example.com/x.md) [top](#nodeproof)",    // 5
			"`[in code](nowhere.md)` [outside](../shared/DESIGN.md) [here](#missing)",             // 6
			"```",                         // 7
			"[in a fence](nowhere.md)",    // 8
			"```",                         // 9
			"[ref]: docs/architecture.md", // 10
			"[bad ref]: docs/missing.md",  // 11
			"[dir](docs/commands/) [abs](/README.md)", // 12
		}, "\n"))},
		"docs/commands/report.md": {Data: []byte("# nodeproof report\n\n## Flags\n\nSee [the README](../../README.md#nodeproof) and [code](../../main.go#L3).\n")},
		"docs/architecture.md":    {Data: []byte("Architecture\n============\n\n[report](commands/report.md#nodeproof-report) [main](../main.go#nowhere)\n")},
		"docs/report.png":         {Data: []byte("png")},
		"main.go":                 {Data: []byte("package main\n")},
	}
	files, err := markdownFiles(tree)
	require.NoError(t, err)
	require.Equal(t, []string{"README.md", "docs/architecture.md", "docs/commands/report.md"}, files)

	problems, err := checkLinks(tree, files)
	require.NoError(t, err)
	require.Equal(t, []string{
		"README.md:4: link target missing: docs/commands/gone.md (no such file)",
		"README.md:4: link target missing: docs/commands/report.md#no-such-heading (docs/commands/report.md has no heading with anchor #no-such-heading)",
		"README.md:6: link target missing: ../shared/DESIGN.md (points outside the repository)",
		"README.md:6: link target missing: #missing (README.md has no heading with anchor #missing)",
		"README.md:11: link target missing: docs/missing.md (no such file)",
		"README.md:12: link target missing: /README.md (an absolute path; write it relative to README.md)",
		"docs/architecture.md:4: link target missing: ../main.go#nowhere (main.go is not Markdown; only #L<line> anchors are allowed)",
	}, problems)
}

func TestAnchors(t *testing.T) {
	doc := strings.Join([]string{
		"# Suite `admission` (subsystem admission)",
		"## When an invariant fails",
		"## Device plugin manager (`core/devicemanager`)",
		"## Flags",
		"## Flags",
		"### `nodeproof cgroups`: the tree for your own manifests",
		"## Exit codes: 0, 1 and 2 ##",
		"## See [the catalogue](invariants.md)",
		"```",
		"# not a heading",
		"```",
		"Setext heading",
		"--------------",
		"#hashtag is not a heading",
	}, "\n")
	require.Equal(t, map[string]bool{
		"suite-admission-subsystem-admission":     true,
		"when-an-invariant-fails":                 true,
		"device-plugin-manager-coredevicemanager": true,
		"flags":   true,
		"flags-1": true,
		"nodeproof-cgroups-the-tree-for-your-own-manifests": true,
		"exit-codes-0-1-and-2":                              true,
		"see-the-catalogue":                                 true,
		"setext-heading":                                    true,
	}, anchors(doc))
}

// markdownFiles lists the .md files of the tree, sorted, leaving out hidden
// directories, testdata and what the Makefile generates (bin/, report/).
func markdownFiles(fsys fs.FS) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || p == "bin" || p == "report") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// checkLinks returns one line per broken link, in file and line order.
func checkLinks(fsys fs.FS, files []string) ([]string, error) {
	anchorCache := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchorCache[file]; ok {
			return a, nil
		}
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		anchorCache[file] = anchors(string(data))
		return anchorCache[file], nil
	}

	var problems []string
	for _, file := range files {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		for _, l := range links(string(data)) {
			why, err := resolve(fsys, file, l.target, anchorsOf)
			if err != nil {
				return nil, err
			}
			if why != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: link target missing: %s (%s)", file, l.line, l.target, why))
			}
		}
	}
	return problems, nil
}

// resolve says why target, written in file, does not resolve, or "" when it
// does.
func resolve(fsys fs.FS, file, target string, anchorsOf func(string) (map[string]bool, error)) (string, error) {
	if scheme.MatchString(target) {
		return "", nil // not fetched: the test needs no network
	}
	rawPath, fragment, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return fmt.Sprintf("bad escape in the path: %v", err), nil
	}
	dest := file
	if p != "" {
		if strings.HasPrefix(p, "/") {
			return fmt.Sprintf("an absolute path; write it relative to %s", file), nil
		}
		dest = path.Join(path.Dir(file), p)
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "points outside the repository", nil
		}
		info, err := fs.Stat(fsys, dest)
		if err != nil {
			return "no such file", nil
		}
		if info.IsDir() {
			if fragment != "" {
				return fmt.Sprintf("%s is a directory and has no anchors", dest), nil
			}
			return "", nil
		}
	}
	if fragment == "" {
		return "", nil
	}
	if !strings.HasSuffix(dest, ".md") {
		if lineAnchor.MatchString(fragment) {
			return "", nil
		}
		return fmt.Sprintf("%s is not Markdown; only #L<line> anchors are allowed", dest), nil
	}
	known, err := anchorsOf(dest)
	if err != nil {
		return "", err
	}
	if !known[strings.ToLower(fragment)] {
		return fmt.Sprintf("%s has no heading with anchor #%s", dest, fragment), nil
	}
	return "", nil
}

var (
	scheme     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	lineAnchor = regexp.MustCompile(`^L\d+(-L\d+)?$`)
	// inlineLink finds the target of [text](target) and ![alt](target), with
	// an optional <...> around it and an optional "title" after it.
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	// referenceDefinition finds [label]: target at the start of a line.
	referenceDefinition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	// htmlLink finds href="..." and src="..." in inline HTML.
	htmlLink   = regexp.MustCompile(`(?:href|src)="([^"]*)"`)
	htmlAnchor = regexp.MustCompile(`<a\s[^>]*(?:id|name)="([^"]+)"`)
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$`)
	setextLine = regexp.MustCompile(`^ {0,3}(=+|-+)\s*$`)
	codeFence  = regexp.MustCompile("^ {0,3}(```|~~~)")
	codeSpan   = regexp.MustCompile("(`+)[^`]*?`+")
)

type link struct {
	line   int
	target string
}

// links returns every link target of a Markdown document outside code, with
// its line number (1-based).
func links(doc string) []link {
	var found []link
	for i, line := range proseLines(doc) {
		if line == "" {
			continue
		}
		if m := referenceDefinition.FindStringSubmatch(line); m != nil {
			found = append(found, link{i + 1, m[1]})
			continue
		}
		line = stripCodeSpans(line)
		for _, re := range []*regexp.Regexp{inlineLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				if m[1] != "" {
					found = append(found, link{i + 1, m[1]})
				}
			}
		}
	}
	return found
}

// proseLines returns the document's lines with those inside fenced code
// blocks (and the fences) blanked, so line numbers stay those of the file.
func proseLines(doc string) []string {
	lines := strings.Split(doc, "\n")
	fence := ""
	for i, line := range lines {
		if m := codeFence.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				lines[i] = ""
				continue
			case m[1] == fence:
				fence = ""
				lines[i] = ""
				continue
			}
		}
		if fence != "" {
			lines[i] = ""
		}
	}
	return lines
}

func stripCodeSpans(line string) string {
	return codeSpan.ReplaceAllString(line, "")
}

// anchors returns the anchors a Markdown document defines: one per heading,
// as GitHub names them, and explicit <a id="..."> or name="..." anchors.
func anchors(doc string) map[string]bool {
	found := map[string]bool{}
	seen := map[string]int{}
	add := func(heading string) {
		slug := slugify(heading)
		n := seen[slug]
		seen[slug] = n + 1
		if n > 0 {
			slug = fmt.Sprintf("%s-%d", slug, n)
		}
		found[slug] = true
	}
	lines := proseLines(doc)
	for i, line := range lines {
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			found[strings.ToLower(m[1])] = true
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			add(m[2])
			continue
		}
		// A line of = or - under a paragraph line makes that line a heading.
		if i > 0 && setextLine.MatchString(line) && isParagraphLine(lines[i-1]) {
			add(lines[i-1])
		}
	}
	return found
}

// isParagraphLine tells whether a setext underline below this line makes it
// a heading: it must be text, not blank, a heading, a list item or a table.
func isParagraphLine(line string) bool {
	trimmed := strings.TrimSpace(line)
	return trimmed != "" && !atxHeading.MatchString(line) && !strings.HasPrefix(trimmed, "|") &&
		!strings.HasPrefix(trimmed, "- ") && !strings.HasPrefix(trimmed, "* ") && !setextLine.MatchString(line)
}

var (
	markdownLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag      = regexp.MustCompile(`<[^>]+>`)
)

// slugify turns a heading's text into GitHub's anchor: the rendered text
// (links reduced to their text, no code ticks, emphasis or tags) in lower
// case, with every character but letters, digits, '_', '-' and spaces
// dropped and spaces turned into hyphens.
func slugify(heading string) string {
	text := markdownLink.ReplaceAllString(heading, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
