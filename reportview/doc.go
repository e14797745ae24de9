// Package reportview lays out what the invariant report's pages show and
// what does not depend on the report's own types: horizontal bar charts
// sized from their text, drawn as inline SVG, and the tables of result
// files whose shape the report does not own (linearizability, conformance,
// the plugin check), with headings and figures a reviewer reads at a
// glance. cmd/nodeproof renders index.html and report.md with them.
package reportview
