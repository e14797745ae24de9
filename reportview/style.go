package reportview

import _ "embed"

// Style is the style of every page nodeproof writes (the invariant
// report, plugin-check's report), inline so that a page needs no network.
// It is a file of its own, templates/style.css, which index.html's
// template includes.
//
//go:embed templates/style.css
var Style string
