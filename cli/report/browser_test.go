package report

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodeproof/nodeproof/coverage"
	"github.com/nodeproof/nodeproof/properties"
	"github.com/nodeproof/nodeproof/verify"
)

var browserOut = flag.String("browser.out", "", "write the browser test's reports and screenshots under this `DIR` (default: a temporary directory)")

// browserTimeout bounds everything one page load does: start Chromium, load,
// inspect and screenshot.
const browserTimeout = 90 * time.Second

// chromiumPath finds Debian's chromium (the package .ci/run installs).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// firstScreen is the height of the window the page is first seen in: the
// screenshot's, and docs/report.png's.
const firstScreen = 900

// pageFacts is what the page shows, read by script from the loaded DOM.
type pageFacts struct {
	Verdict        string   `json:"verdict"`
	VerdictClass   string   `json:"verdictClass"`
	MatrixRows     []string `json:"matrixRows"`
	MatrixColumns  int      `json:"matrixColumns"`
	BrokenLinks    []string `json:"brokenLinks"`
	HiddenSections []string `json:"hiddenSections"`
	Sections       []string `json:"sections"`
	Counterexample string   `json:"counterexample"`
	Replay         string   `json:"replay"`
	Charts         int      `json:"charts"`
	MatrixOverflow bool     `json:"matrixOverflow"`
	CutLabels      []string `json:"cutLabels"`
	// The first screen, measured before anything is unfolded: where the
	// verdict, the legend and the matrix end and begin (px from the top of
	// the page), the page's height, and the tables outside a <details>
	// in a suite's section or the inventory.
	VerdictBottom  float64  `json:"verdictBottom"`
	LegendBottom   float64  `json:"legendBottom"`
	LegendStates   []string `json:"legendStates"`
	MatrixTop      float64  `json:"matrixTop"`
	PageHeight     float64  `json:"pageHeight"`
	UnfoldedTables []string `json:"unfoldedTables"`
	// SidewaysScroll is what sticks out of the page's column, everything
	// unfolded: a page wider than the window.
	SidewaysScroll []string `json:"sidewaysScroll"`
}

// inspectPage reads the facts the test asserts: first what the first screen
// shows, folded as the page opens; then, with every <details> open, which
// sections render (have a size), where each matrix link points, what is
// wider than the window, and every SVG text's bounding box against its
// chart's viewBox as the browser lays it out.
const inspectPage = `(() => {
	const text = (sel) => { const e = document.querySelector(sel); return e ? e.innerText : ""; };
	const bottom = (sel) => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect().bottom + window.scrollY : -1; };
	const facts = {
		verdict: text("#verdict strong"),
		verdictClass: (document.querySelector("#verdict") || {}).className || "",
		matrixRows: [...document.querySelectorAll("table.matrix tr")].slice(1).map(r => r.querySelector("th").innerText),
		matrixColumns: document.querySelectorAll("table.matrix tr:first-child th").length,
		brokenLinks: [], hiddenSections: [], sections: [], cutLabels: [], unfoldedTables: [], sidewaysScroll: [],
		counterexample: text(".counterexample pre"),
		replay: text(".counterexample code.replay"),
		charts: document.querySelectorAll("svg.chart").length,
		matrixOverflow: document.querySelector("table.matrix").getBoundingClientRect().right > document.documentElement.clientWidth,
		verdictBottom: bottom("#verdict"),
		legendBottom: bottom("#legend"),
		legendStates: [...document.querySelectorAll("#legend .sample")].map(e => e.innerText),
		matrixTop: document.querySelector("table.matrix").getBoundingClientRect().top + window.scrollY,
		pageHeight: document.documentElement.scrollHeight,
	};
	for (const t of document.querySelectorAll("section.suite table, #inventory table")) {
		if (t.checkVisibility()) facts.unfoldedTables.push(t.closest("section").id);
	}
	for (const d of document.querySelectorAll("details")) d.open = true;
	for (const a of document.querySelectorAll("table.matrix a")) {
		const id = a.getAttribute("href").slice(1);
		if (!document.getElementById(id)) facts.brokenLinks.push(a.getAttribute("href"));
	}
	for (const s of document.querySelectorAll("section")) {
		facts.sections.push(s.id);
		if (s.offsetHeight === 0 || s.innerText.trim() === "") facts.hiddenSections.push(s.id);
	}
	// The page's column: what sticks out of it makes the window scroll
	// sideways wherever a scroll bar takes room.
	const width = document.body.getBoundingClientRect().right - parseFloat(getComputedStyle(document.body).paddingRight);
	for (const e of document.querySelectorAll("body *")) {
		// The outermost element that sticks out, not each of its cells.
		if (e.getBoundingClientRect().right > width && e.parentElement.getBoundingClientRect().right <= width) {
			facts.sidewaysScroll.push(e.tagName + " in #" + (e.closest("section") || {}).id + ": " + e.innerText.slice(0, 60));
		}
	}
	for (const svg of document.querySelectorAll("svg.chart")) {
		const vb = svg.viewBox.baseVal;
		for (const t of svg.querySelectorAll("text")) {
			const b = t.getBBox();
			if (b.x < vb.x || b.y < vb.y || b.x + b.width > vb.x + vb.width || b.y + b.height > vb.y + vb.height) {
				facts.cutLabels.push(t.textContent + " [" + [b.x, b.y, b.width, b.height].join(",") + "] in " + [vb.width, vb.height].join("x"));
			}
		}
	}
	return facts;
})()`

// loadInChromium opens dir/index.html from file:// and returns what the page
// shows, the console errors and every URL the page requested. It writes
// dir/screenshot.png: the first screen a reviewer sees, 1280 by 900 pixels
// (docs/report.png is the passing report's).
func loadInChromium(t *testing.T, chromium, dir string) (pageFacts, []string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, firstScreen),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()

	var mu sync.Mutex
	var consoleErrors, requests []string
	chromedp.ListenTarget(browserCtx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				consoleErrors = append(consoleErrors, fmt.Sprintf("console.%s: %v", ev.Type, ev.Args))
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, "exception: "+ev.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError || ev.Entry.Level == log.LevelWarning {
				consoleErrors = append(consoleErrors, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})

	page := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "index.html")}).String()
	var facts pageFacts
	var screenshot []byte
	err := chromedp.Run(browserCtx,
		network.Enable(),
		log.Enable(),
		chromedp.EmulateViewport(1280, firstScreen),
		chromedp.Navigate(page),
		chromedp.WaitVisible("#matrix", chromedp.ByQuery),
		// The first screen, before the inspection unfolds everything.
		chromedp.CaptureScreenshot(&screenshot),
		chromedp.Evaluate(inspectPage, &facts),
	)
	require.NoError(t, err, "loading %s in Chromium", page)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "screenshot.png"), screenshot, 0o644))
	require.NoError(t, chromedp.Cancel(browserCtx))

	mu.Lock()
	defer mu.Unlock()
	// Every request the page made must be the page itself.
	var others []string
	for _, r := range requests {
		if r != page {
			others = append(others, r)
		}
	}
	return facts, consoleErrors, others
}

// TestReportInBrowser writes a passing and a failing report and loads each
// in headless Chromium: the verdict, the matrix and every section render,
// the page logs no error and requests nothing, no chart label is cut, and
// the failing one shows its counterexample and replay line.
func TestReportInBrowser(t *testing.T) {
	chromium := chromiumPath()
	if chromium == "" {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it)")
	}
	real := properties.Suites()
	for _, tc := range []struct {
		name   string
		suites []properties.Suite
		failed bool
	}{
		{"passing", real, false},
		{"failing", append([]properties.Suite{counterSuite("limited", 2)}, real...), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if *browserOut != "" {
				dir = filepath.Join(*browserOut, tc.name)
			}
			code, _, stderr := runReport(tc.suites, verify.Findings(), "--out", dir, "--checks", "10", "--steps", "20", "--seed", "1",
				"--histories", "1", "--sim-seeds", "1", "--sim-hours", "0.1")
			want := 0
			if tc.failed {
				want = 1
			}
			require.Equal(t, want, code, stderr)

			facts, consoleErrors, requests := loadInChromium(t, chromium, dir)
			assert.Empty(t, consoleErrors, "console errors")
			assert.Empty(t, requests, "requests besides the page itself")
			assert.FileExists(t, filepath.Join(dir, "screenshot.png"))

			if tc.failed {
				assert.Contains(t, facts.Verdict, "FAILED")
				assert.Contains(t, facts.VerdictClass, "failed")
				assert.Contains(t, facts.Counterexample, "step 1: inc\nstep 2: inc\nTEST-LIMIT: counter is 2, limit 2")
				assert.Equal(t, "nodeproof replay --suite limited --seed 1 --steps 20", facts.Replay)
			} else {
				assert.Contains(t, facts.Verdict, "PASSED")
				assert.Contains(t, facts.VerdictClass, "passed")
				assert.Empty(t, facts.Counterexample)
			}
			var written struct {
				Matrix []coverage.Row `json:"matrix"`
			}
			require.NoError(t, json.Unmarshal([]byte(read(t, dir, "report.json")), &written))
			var subsystems []string
			for _, r := range written.Matrix {
				subsystems = append(subsystems, r.Subsystem)
			}
			require.NotEmpty(t, subsystems)
			assert.Equal(t, subsystems, facts.MatrixRows)
			assert.Equal(t, len(coverage.Layers)+1, facts.MatrixColumns)
			assert.Empty(t, facts.BrokenLinks, "matrix links without a target")
			assert.False(t, facts.MatrixOverflow, "the matrix is wider than the window")
			// The matrix comes right after the verdict.
			// Then the failures, the known kubelet findings and what did not run.
			wantSections := []string{"matrix"}
			if tc.failed {
				wantSections = append(wantSections, "failures")
			}
			wantSections = append(wantSections, "findings", "not-run", "suites")
			for _, s := range tc.suites {
				wantSections = append(wantSections, "suite-"+s.Name)
			}
			wantSections = append(wantSections, "sim", "node", "linearizability", "conformance", "upstream", "plugin-check", "mutants", "inventory")
			assert.Equal(t, wantSections, facts.Sections)
			assert.Empty(t, facts.HiddenSections, "sections that do not render")
			assert.Positive(t, facts.Charts)
			assert.Empty(t, facts.CutLabels, "chart labels outside their viewBox")
			assert.Empty(t, facts.SidewaysScroll, "what sticks out of the page's column, everything unfolded")

			// The first screen holds the verdict, the legend and the top of
			// the matrix; the detail below is folded, so that the page is
			// one a reviewer scans (34,000 px tall for a full run before).
			assert.LessOrEqual(t, facts.VerdictBottom, float64(firstScreen), "the verdict ends below the first screen")
			assert.LessOrEqual(t, facts.LegendBottom, float64(firstScreen), "the matrix's legend ends below the first screen")
			assert.Less(t, facts.MatrixTop, float64(firstScreen), "the matrix starts below the first screen")
			var states []string
			for _, s := range coverage.Legend {
				states = append(states, s.Status)
			}
			assert.Equal(t, states, facts.LegendStates, "the legend's states")
			assert.Empty(t, facts.UnfoldedTables, "per-invariant and inventory tables shown unfolded")
			t.Logf("page height %.0f px", facts.PageHeight)
		})
	}
}
