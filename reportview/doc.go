// Package reportview is the invariant report as a library: the schema of
// report.json (Report and its sections, every field documented), built
// from typed results (properties.Result through NewSuite, the simulation's
// sections of package simreport, linearizability.Result as it is) and from
// the result files other make targets leave (LoadMutants, LoadConformance,
// LoadResults, LoadLinearizability, LoadSim, LoadNode, LoadUpstream); the
// verdict, the coverage matrix and the not-run list, derived in one place
// (Report.Finish, Report.Verdict); and its renderings: index.html from the templates
// embedded beside this file, report.md (sized for a pull-request comment)
// and the lines printed on the terminal. Run runs what a report shows
// in-process; ShardFile and MergeShards are the report's side of a
// campaign.
//
// It also lays out what the pages show that does not depend on the
// report's types: bar charts sized from their text and drawn as inline
// SVG, the tables of result files whose shape the report does not own,
// with headings in words and figures with their unit, the Markdown
// primitives (tables, escaping, inline code and code blocks that no text
// can break out of, the size a pull-request comment allows) and the style
// of every page, which agent/plugincheck's report shares.
//
// The nodeproof report command (cli/report) parses flags and calls it.
package reportview
