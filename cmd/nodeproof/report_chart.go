package main

import (
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Geometry of the horizontal bar charts, in SVG user units (CSS pixels).
// The labels are 12px monospace text; chartCharWidth is wider than the
// advance of the monospace faces a browser picks at that size (Chromium on
// Debian measures 7.6), so the label column and the viewBox sized from it
// always hold the text. The browser test measures it.
const (
	chartRowHeight = 22
	chartBarHeight = 16
	chartBarWidth  = 360 // the longest bar
	chartCharWidth = 8
	chartGap       = 8
)

// barChart is a horizontal bar chart laid out for the template.
type barChart struct {
	Title         string
	Width, Height int
	LabelX        int // where labels end (they are right-aligned)
	BarX          int
	BarHeight     int
	Bars          []bar
}

type bar struct {
	Label, Value string
	Y, TextY     int
	Width        int
	ValueX       int
}

// barItem is one bar before layout.
type barItem struct {
	Label string
	Size  float64 // the bar's length, relative to the others
	Value string  // the text written after the bar
}

// textWidth is the width the chart reserves for s.
func textWidth(s string) int {
	return int(float64(utf8.RuneCountInString(s))*chartCharWidth + 0.999)
}

// layoutChart sizes the chart from its text: the label column from the
// longest label and the right margin from the longest value, so that no
// label is cut at either edge of the viewBox.
func layoutChart(title string, items []barItem) barChart {
	c := barChart{Title: title, BarHeight: chartBarHeight}
	most := 0.0
	labelWidth, valueWidth := 0, 0
	for _, it := range items {
		most = max(most, it.Size)
		labelWidth = max(labelWidth, textWidth(it.Label))
		valueWidth = max(valueWidth, textWidth(it.Value))
	}
	c.LabelX = chartGap + labelWidth
	c.BarX = c.LabelX + chartGap
	c.Width = c.BarX + chartBarWidth + chartGap + valueWidth + chartGap
	c.Height = len(items) * chartRowHeight
	for i, it := range items {
		width := 1 // a bar of zero still shows where it starts
		if most > 0 {
			width = max(1, int(it.Size*chartBarWidth/most))
		}
		y := i * chartRowHeight
		c.Bars = append(c.Bars, bar{
			Label:  it.Label,
			Value:  it.Value,
			Y:      y + (chartRowHeight-chartBarHeight)/2,
			TextY:  y + chartRowHeight/2 + 4,
			Width:  width,
			ValueX: c.BarX + width + chartGap,
		})
	}
	return c
}

// actionChart has one bar per action, most frequent first, so that a
// reviewer sees at a glance which actions the generator favoured or starved.
func actionChart(actions map[string]int) barChart {
	names := make([]string, 0, len(actions))
	for name := range actions {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(actions[b], actions[a]), cmp.Compare(a, b))
	})
	items := make([]barItem, 0, len(names))
	for _, name := range names {
		items = append(items, barItem{Label: name, Size: float64(actions[name]), Value: fmt.Sprint(actions[name])})
	}
	return layoutChart("actions executed, by action", items)
}

// statisticChart draws, for each statistic, the share of its samples that
// were not zero (how often the greedy preemption was not the best one, for
// example), with the mean and maximum written beside it. Statistics have
// units of their own; the share is the one length they have in common.
func statisticChart(stats []statisticReport) barChart {
	items := make([]barItem, 0, len(stats))
	for _, st := range stats {
		share := 0.0
		if st.Samples > 0 {
			share = float64(st.Nonzero) / float64(st.Samples)
		}
		items = append(items, barItem{Label: st.Name, Size: share,
			Value: fmt.Sprintf("%d/%d non-zero, mean %s, max %s", st.Nonzero, st.Samples, formatStat(st.Mean), formatStat(st.Max))})
	}
	return layoutChart("share of samples not zero, by statistic", items)
}
