package reportview

// Style is the style of every page nodeproof writes (the invariant
// report, plugin-check's report), inline so that a page needs no network.
const Style = `body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 80rem; padding: 0 1rem; color: #1b1f24; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.source { overflow-wrap: anywhere; min-width: 12rem; }
.passed { color: #1a7f37; font-weight: 600; }
.failed { color: #cf222e; font-weight: 600; }
.verdict { padding: 0.8rem 1rem; border-radius: 6px; font-size: 1.25rem; margin: 1rem 0; }
.verdict.passed { background: #dafbe1; border: 1px solid #1a7f37; }
.verdict.failed { background: #ffebe9; border: 1px solid #cf222e; }
.verdict ul { font-size: 1rem; font-weight: normal; margin: 0.4rem 0 0; }
table.matrix { width: 100%; font-size: 0.9rem; }
table.matrix td { white-space: nowrap; }
.cell-passed { background: #dafbe1; }
.cell-failed { background: #ffebe9; font-weight: 600; }
.cell-built { background: #ddf4ff; }
.cell-not-run { background: #fff8c5; }
.cell-not-built { color: #656d76; font-style: italic; }
.legend { list-style: none; padding: 0; margin: 0.5rem 0; display: grid; grid-template-columns: repeat(auto-fit, minmax(30rem, 1fr)); gap: 0.2rem 1.2rem; font-size: 0.9rem; }
.legend .sample { border: 1px solid #d0d7de; padding: 0 0.4rem; }
details { margin: 0.4rem 0; }
summary { cursor: pointer; }
section.suite { border-top: none; margin-top: 1rem; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; }
code { font-family: ui-monospace, monospace; }
section { border-top: 1px solid #d0d7de; margin-top: 2rem; }
.counterexample { border-left: 4px solid #cf222e; padding-left: 1rem; }
svg { max-width: 100%; height: auto; }
svg text { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; fill: #1b1f24; }
svg rect { fill: #0969da; }
`
