package main

import (
	"encoding/json"
	"io"
)

// writeJSON writes report.json, the machine-readable form of reportData.
func writeJSON(w io.Writer, data *reportData) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Messages quote Go code and shell commands; keep <, > and & readable.
	enc.SetEscapeHTML(false)
	return enc.Encode(data)
}
