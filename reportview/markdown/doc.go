// Package markdown writes the Markdown that nodeproof's reports post as a
// pull-request comment (the invariant report's and plugin-check's
// report.md): tables whose cells cannot break out of their row, inline code
// and fenced blocks that no text inside them can close, and the bounds that
// keep a comment within what GitHub accepts. It is pure: strings in,
// strings out.
package markdown
