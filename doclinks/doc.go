// Package doclinks checks, with a test, that every relative link in the
// repository's Markdown (README.md, BENCHMARKS.md, docs/ and any other .md
// file outside testdata) points to a file that exists and, where the link
// names an anchor, to a heading that exists. Pages move between README.md and
// docs/ as the project grows; a broken link should fail `go test ./...`
// rather than a newcomer's first read.
//
// A failure names the file and line of the link, the target as written and
// why it does not resolve, one line per link:
//
//	README.md:42: link target missing: docs/commands/report.md (no such file)
//
// Links with a scheme (https:, mailto:) are not fetched: the test needs no
// network. Links inside code spans and fenced code blocks are text, not
// links, and are skipped. A relative link that climbs out of the repository
// is refused, because it resolves only beside a particular checkout.
//
// Anchors are computed as GitHub computes them: the heading's text in lower
// case, without punctuation, spaces turned into hyphens, and -1, -2, ...
// appended to repeated headings. The package has no code outside its test:
// nothing else should depend on it. Its subpackage commandlines finds the
// command lines the same Markdown shows, which cmd/nodeproof's tests hold
// against the command tree.
package doclinks
