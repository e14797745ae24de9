package reportview

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"unicode/utf8"
)

// Geometry of the horizontal bar charts, in SVG user units (CSS pixels).
// The labels are 12px monospace text; charWidth is wider than the advance
// of the monospace faces a browser picks at that size (Chromium on Debian
// measures 7.6), so the label column and the viewBox sized from it always
// hold the text. cmd/nodeproof's browser test measures it.
const (
	rowHeight = 22
	barHeight = 16
	barWidth  = 360 // the longest bar
	charWidth = 8
	gap       = 8
)

// Chart is a horizontal bar chart laid out from its text.
type Chart struct {
	Title         string
	Width, Height int
	LabelX        int // where labels end (they are right-aligned)
	BarX          int
	BarHeight     int
	Bars          []Bar
}

// Bar is one laid-out bar: its label left of it, its value right of it.
type Bar struct {
	Label, Value string
	Y, TextY     int
	Width        int
	ValueX       int
}

// Item is one bar before layout.
type Item struct {
	Label string
	Size  float64 // the bar's length, relative to the others
	Value string  // the text written after the bar
}

// TextWidth is the width the chart reserves for s.
func TextWidth(s string) int {
	return int(float64(utf8.RuneCountInString(s))*charWidth + 0.999)
}

// Layout sizes the chart from its text: the label column from the longest
// label and the right margin from the longest value, so that no label is
// cut at either edge of the viewBox.
func Layout(title string, items []Item) Chart {
	c := Chart{Title: title, BarHeight: barHeight}
	most := 0.0
	labelWidth, valueWidth := 0, 0
	for _, it := range items {
		most = max(most, it.Size)
		labelWidth = max(labelWidth, TextWidth(it.Label))
		valueWidth = max(valueWidth, TextWidth(it.Value))
	}
	c.LabelX = gap + labelWidth
	c.BarX = c.LabelX + gap
	c.Width = c.BarX + barWidth + gap + valueWidth + gap
	c.Height = len(items) * rowHeight
	for i, it := range items {
		width := 1 // a bar of zero still shows where it starts
		if most > 0 {
			width = max(1, int(it.Size*barWidth/most))
		}
		y := i * rowHeight
		c.Bars = append(c.Bars, Bar{
			Label:  it.Label,
			Value:  it.Value,
			Y:      y + (rowHeight-barHeight)/2,
			TextY:  y + rowHeight/2 + 4,
			Width:  width,
			ValueX: c.BarX + width + gap,
		})
	}
	return c
}

// Counts has one bar per name, the most frequent first (ties by name), so
// that a reviewer sees at a glance which names, the actions a suite drew
// for example, were favoured or starved.
func Counts(title string, counts map[string]int) Chart {
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b))
	})
	items := make([]Item, 0, len(names))
	for _, name := range names {
		items = append(items, Item{Label: name, Size: float64(counts[name]), Value: fmt.Sprint(counts[name])})
	}
	return Layout(title, items)
}

// SVG draws the chart as inline SVG of class "chart", which the page's
// style sheet colours. A chart of fewer than two bars draws nothing: one
// bar compares nothing and would only fill the width.
func (c Chart) SVG() (template.HTML, error) {
	if len(c.Bars) < 2 {
		return "", nil
	}
	var b strings.Builder
	if err := svgTemplate.Execute(&b, c); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

var svgTemplate = template.Must(template.New("chart").Parse(`<svg class="chart" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
{{$c := .}}{{range .Bars}}<g><title>{{.Label}}: {{.Value}}</title>
<text x="{{$c.LabelX}}" y="{{.TextY}}" text-anchor="end">{{.Label}}</text>
<rect x="{{$c.BarX}}" y="{{.Y}}" width="{{.Width}}" height="{{$c.BarHeight}}"></rect>
<text x="{{.ValueX}}" y="{{.TextY}}">{{.Value}}</text></g>
{{end}}</svg>`))
