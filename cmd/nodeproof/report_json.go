package main

import (
	"encoding/json"
	"io"

	"github.com/nodeproof/nodeproof/properties"
)

// writeJSON writes report.json, the machine-readable form of reportData.
func writeJSON(w io.Writer, data *reportData) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Messages quote Go code and shell commands; keep <, > and & readable.
	enc.SetEscapeHTML(false)
	return enc.Encode(data)
}

// sourceReport is one source of an invariant in report.json. Kind says how to
// read URL: an absolute link for upstream code, issues, pull requests and
// KEPs; a path relative to nodeproof's repository for "doc"; empty for "seed".
type sourceReport struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	URL  string `json:"url"`
}

// sourceReports converts an invariant's sources for report.json; never nil,
// so an invariant without sources shows [] rather than null.
func sourceReports(sources []properties.Source) []sourceReport {
	out := make([]sourceReport, len(sources))
	for i, s := range sources {
		out[i] = sourceReport{Kind: string(s.Kind), Text: s.Text, URL: s.URL}
	}
	return out
}
