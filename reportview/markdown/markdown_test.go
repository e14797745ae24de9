package markdown

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTableEscapesCells(t *testing.T) {
	var b strings.Builder
	Table(&b, []string{"A", "B"}, [][]string{{"x|y", "<b>&\nz"}})
	assert.Equal(t, "| A | B |\n|---|---|\n| x\\|y | &lt;b&gt;&amp; z |\n", b.String())
	b.Reset()
	Table(&b, []string{"A"}, nil)
	assert.Equal(t, "(none)\n", b.String())
}

func TestInlineAndCodeBlockCannotBeClosedByTheirText(t *testing.T) {
	assert.Equal(t, "`go test`", Inline("go test"))
	assert.Equal(t, "``a ` b``", Inline("a ` b"))
	assert.Equal(t, "`` `x` ``", Inline("`x`"))
	var b strings.Builder
	CodeBlock(&b, "a\n````\nb\n")
	assert.Equal(t, "`````text\na\n````\nb\n`````\n", b.String())
}

func TestCut(t *testing.T) {
	assert.Equal(t, "short", Cut("short"))
	long := strings.Repeat("é", MessageLimit) // two bytes each: the cut falls inside one
	cut := Cut(long)
	assert.True(t, strings.HasSuffix(cut, "\n… (cut; index.html has the whole message)"))
	assert.LessOrEqual(t, len(cut), MessageLimit+len("\n… (cut; index.html has the whole message)"))
	assert.True(t, strings.HasPrefix(cut, strings.Repeat("é", MessageLimit/2)))
}
