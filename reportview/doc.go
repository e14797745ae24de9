// Package reportview lays out what the invariant report's pages show and
// what does not depend on the report's own types: horizontal bar charts
// sized from their text, drawn as inline SVG, and the tables of result
// files whose shape the report does not own (linearizability, conformance,
// the plugin check), with headings and figures a reviewer reads at a
// glance; the Markdown of report.md (tables, escaping, inline code and code
// blocks that no text can break out of, the size a pull-request comment
// allows) and the style of every page. cmd/nodeproof renders the invariant
// report's index.html and report.md with them, agent/plugincheck the
// plugin check's.
package reportview
