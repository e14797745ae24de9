package reportview

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	svgOpen = regexp.MustCompile(`^<svg class="chart" width="(\d+)" height="(\d+)" viewBox="0 0 (\d+) (\d+)"`)
	svgText = regexp.MustCompile(`<text x="(\d+)" y="(\d+)"( text-anchor="end")?>([^<]*)</text>`)
)

// TestChartLabelsFitTheViewBox sizes a chart with long labels and values
// and checks every text's extent, at the reserved character width, against
// the chart's viewBox; the browser test measures the same as laid out.
func TestChartLabelsFitTheViewBox(t *testing.T) {
	chart := Counts("actions drawn, by action", map[string]int{
		"a-very-long-action-name-that-would-be-cut-by-a-fixed-label-column": 1,
		"register <plugin> & allocate":                                      123456789,
		"z":                                                                 0,
	})
	svg, err := chart.SVG()
	require.NoError(t, err)
	m := svgOpen.FindStringSubmatch(string(svg))
	require.NotNil(t, m, svg)
	width, _ := strconv.Atoi(m[3])
	height, _ := strconv.Atoi(m[4])
	assert.Equal(t, m[1], m[3], "width and viewBox width")
	texts := svgText.FindAllStringSubmatch(string(svg), -1)
	require.Len(t, texts, 6, "a label and a value per bar")
	for _, tx := range texts {
		x, _ := strconv.Atoi(tx[1])
		y, _ := strconv.Atoi(tx[2])
		label := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(tx[4])
		left, right := x, x+TextWidth(label)
		if tx[3] != "" {
			left, right = x-TextWidth(label), x
		}
		assert.GreaterOrEqual(t, left, 0, "%q starts left of the viewBox", label)
		assert.LessOrEqual(t, right, width, "%q ends right of the viewBox (width %d)", label, width)
		assert.True(t, y > 0 && y <= height, "%q at y=%d outside height %d", label, y, height)
	}
}

// TestCountsMostFrequentFirst: the bars run from the most drawn down,
// ties by name, each as long as its count allows.
func TestCountsMostFrequentFirst(t *testing.T) {
	chart := Counts("t", map[string]int{"b": 10, "a": 10, "c": 40, "d": 0})
	var labels []string
	for _, b := range chart.Bars {
		labels = append(labels, b.Label+" "+b.Value)
	}
	assert.Equal(t, []string{"c 40", "a 10", "b 10", "d 0"}, labels)
	assert.Equal(t, barWidth, chart.Bars[0].Width, "the longest bar")
	assert.Equal(t, barWidth/4, chart.Bars[1].Width)
	assert.Equal(t, 1, chart.Bars[3].Width, "a bar of zero still shows where it starts")
}

// TestChartOfOneBarDrawsNothing: one bar compares nothing, and used to
// fill the page's width on its own.
func TestChartOfOneBarDrawsNothing(t *testing.T) {
	for _, counts := range []map[string]int{nil, {"inc": 20}} {
		svg, err := Counts("t", counts).SVG()
		require.NoError(t, err)
		assert.Empty(t, svg, "%v", counts)
	}
	svg, err := Counts("t", map[string]int{"inc": 20, "reset": 3}).SVG()
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(svg), "<rect "))
}
