package commandlines

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const page = "# np\n" + // 1
	"\n" + // 2
	"```sh\n" + // 3
	"np sim [--seed N | --seeds A..B] [--hours H] \\\n" + // 4
	"       [--json FILE]\n" + // 5
	"np cgroups -f FILE [--node-cpu QUANTITY]\n" + // 6
	"           [--cgroup-version 1|2] [--driver cgroupfs|systemd] [--json]\n" + // 7
	"make mutants   # np mutants --json report/mutants.json\n" + // 8
	"go run ./cmd/np report --suite '^(prober|imagegc)$' --out /tmp/r   # figures\n" + // 9
	"JOB_COMPLETION_INDEX=2 np campaign --plan \"my plan.yaml\" --out /results\n" + // 10
	"go build -o /tmp/np ./cmd/np && /usr/bin/time -v /tmp/np report --out /tmp/report\n" + // 11
	"np findings --list | grep SIM-F1 > out.txt 2>&1; np replay --suite sim --seed 1 >>log\n" + // 12
	"np plugin-check (--dir DIR | --exec 'CMD ARGS') [--mute CHECK,...]\n" + // 13
	"np replay --suite NAME --failfile FILE\n" + // 14
	"```\n" + // 15
	"\n" + // 16
	"```text\n" + // 17
	"$ np sim --seed 1\n" + // 18
	"seed 1  passed\n" + // 19
	"  (indented)\n" + // 20
	"\n" + // 21
	"$ np --version\n" + // 22
	"$ ls\n" + // 23
	"np sim --seed 2\n" + // 24
	"```\n" + // 25
	"```yaml\n" + // 26
	"pods: 20   # as np sim --pods\n" + // 27
	"```\n" + // 28
	"```\n" + // 29
	"np cgroups: pods.yaml: pod \"web\": bad\n" + // 30
	"```\n" + // 31
	"1. A step:\n" + // 32
	"   ```sh\n" + // 33
	"   np admit -f docs/x.yaml --json\n" + // 34
	"   ```\n" // 35

// TestParse: the commands of every kind of block, with their lines, words
// and output; data, comments and other programs are left out.
func TestParse(t *testing.T) {
	got := Parse("doc.md", page, "np")
	want := []Command{
		{Line: 4, Text: "np sim [--seed N | --seeds A..B] [--hours H] [--json FILE]", Synopsis: true,
			Args: []string{"sim", "[--seed", "N", "|", "--seeds", "A..B]", "[--hours", "H]", "[--json", "FILE]"}},
		{Line: 6, Text: "np cgroups -f FILE [--node-cpu QUANTITY] [--cgroup-version 1|2] [--driver cgroupfs|systemd] [--json]", Synopsis: true,
			Args: []string{"cgroups", "-f", "FILE", "[--node-cpu", "QUANTITY]", "[--cgroup-version", "1", "|", "2]", "[--driver", "cgroupfs", "|", "systemd]", "[--json]"}},
		{Line: 9, Text: "go run ./cmd/np report --suite '^(prober|imagegc)$' --out /tmp/r   # figures",
			Args: []string{"report", "--suite", "^(prober|imagegc)$", "--out", "/tmp/r"}},
		{Line: 10, Text: `JOB_COMPLETION_INDEX=2 np campaign --plan "my plan.yaml" --out /results`,
			Args: []string{"campaign", "--plan", "my plan.yaml", "--out", "/results"}},
		{Line: 11, Text: "go build -o /tmp/np ./cmd/np && /usr/bin/time -v /tmp/np report --out /tmp/report",
			Args: []string{"report", "--out", "/tmp/report"}},
		{Line: 12, Text: "np findings --list | grep SIM-F1 > out.txt 2>&1; np replay --suite sim --seed 1 >>log",
			Args: []string{"findings", "--list"}},
		{Line: 12, Text: "np findings --list | grep SIM-F1 > out.txt 2>&1; np replay --suite sim --seed 1 >>log",
			Args: []string{"replay", "--suite", "sim", "--seed", "1"}},
		{Line: 13, Text: "np plugin-check (--dir DIR | --exec 'CMD ARGS') [--mute CHECK,...]", Synopsis: true,
			Args: []string{"plugin-check", "(--dir", "DIR", "|", "--exec", "CMD ARGS)", "[--mute", "CHECK,...]"}},
		{Line: 14, Text: "np replay --suite NAME --failfile FILE", Synopsis: true,
			Args: []string{"replay", "--suite", "NAME", "--failfile", "FILE"}},
		{Line: 18, Text: "np sim --seed 1", Args: []string{"sim", "--seed", "1"}, Output: []string{"seed 1  passed", "  (indented)"}},
		{Line: 22, Text: "np --version", Args: []string{"--version"}},
		{Line: 34, Text: "np admit -f docs/x.yaml --json", Args: []string{"admit", "-f", "docs/x.yaml", "--json"}},
	}
	for i := range want {
		want[i].File = "doc.md"
	}
	assert.Equal(t, want, got)
}

// TestUsage: a synopsis's command words and each flag with the value it
// is shown with, alternatives and brackets included.
func TestUsage(t *testing.T) {
	cmds := Parse("doc.md", page, "np")
	usage := map[int]Usage{}
	for _, c := range cmds {
		if c.Synopsis {
			usage[c.Line] = c.Usage()
		}
	}
	assert.Equal(t, map[int]Usage{
		4: {Words: []string{"sim"}, Flags: []UsageFlag{{"--seed", "N"}, {"--seeds", "A..B"}, {"--hours", "H"}, {"--json", "FILE"}}},
		6: {Words: []string{"cgroups"}, Flags: []UsageFlag{{"-f", "FILE"}, {"--node-cpu", "QUANTITY"}, {"--cgroup-version", "1|2"},
			{"--driver", "cgroupfs|systemd"}, {"--json", ""}}},
		13: {Words: []string{"plugin-check"}, Flags: []UsageFlag{{"--dir", "DIR"}, {"--exec", "CMD ARGS"}, {"--mute", "CHECK,..."}}},
		14: {Words: []string{"replay"}, Flags: []UsageFlag{{"--suite", "NAME"}, {"--failfile", "FILE"}}},
	}, usage)
	assert.Equal(t, []string{"1", "2"}, UsageFlag{"--cgroup-version", "1|2"}.Concrete())
	assert.Empty(t, UsageFlag{"--seeds", "A..B"}.Concrete())
	assert.Empty(t, UsageFlag{"--qos-reserved", "memory=P%"}.Concrete())
	assert.Empty(t, UsageFlag{"--json", ""}.Concrete())
	assert.Equal(t, Usage{Words: []string{"checkpoint", "FILE"}, Flags: []UsageFlag{{"--json", ""}, {"--x", "1"}}},
		Command{Args: []string{"checkpoint", "FILE", "[--json]", "[--x=1]"}}.Usage())
}

// TestLex: quotes, escapes, operators and redirections as the shell reads
// them.
func TestLex(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string // operators in angle brackets
	}{
		{`a 'b c' "d \"e\" \$f" g\ h`, []string{"a", "b c", `d "e" $f`, "g h"}},
		{`a|b||c&&d;e & f`, []string{"a", "<|>", "b", "<||>", "c", "<&&>", "d", "<;>", "e", "<&>", "f"}},
		{`a 2>&1 >out &>both <in`, []string{"a", "2>&1", ">out", "&>both", "<in"}},
		{`a '#' b#c # comment`, []string{"a", "#", "b#c"}},
		{`a 'unclosed`, []string{"a", "unclosed"}},
	} {
		var got []string
		for _, tok := range lex(tc.line) {
			if tok.op {
				got = append(got, "<"+tok.text+">")
			} else {
				got = append(got, tok.text)
			}
		}
		assert.Equal(t, tc.want, got, tc.line)
	}
	assert.Equal(t, []string{"sim", "--seed", "1"}, withoutRedirections([]string{"sim", ">", "out", "--seed", "2>&1", "1", ">>log"}))
}

// TestMatchOutput: a shown output agrees with the command's exactly,
// except where a … line stands for lines left out; a drift names the
// first line that differs.
func TestMatchOutput(t *testing.T) {
	got := strings.Split("a\nb\nc\nd\ne", "\n")
	for _, shown := range [][]string{
		{"a", "b", "c", "d", "e"},
		{"a", "b  ", "c", "d", "e"},
		{"a", "…", "e"},
		{"a", "b", "  ...", "d", "e"},
		{"…", "c", "…"},
		{"a", "…"},
		{"…", "e"},
		{"…"},
	} {
		assert.NoError(t, MatchOutput(shown, got), "%q", shown)
	}
	for _, tc := range []struct {
		shown []string
		want  string
	}{
		{[]string{"a", "B", "c", "d", "e"}, `output line 2: the page shows "B", the command prints "b"`},
		{[]string{"a", "b", "c", "d"}, "the command prints 5 lines, the page shows 4 and no … for the rest"},
		{[]string{"a", "b", "c", "d", "e", "f"}, `output line 6: the page shows "f", the command prints no more lines`},
		{[]string{"a", "…", "x", "…"}, `the shown lines from "x" on are not in the output after its line 1`},
		{[]string{"…", "d"}, `output line 5: the page shows "d", the command prints "e"`},
		{[]string{"a", "…", "d", "c"}, `output line 5: the page shows "c", the command prints "e"`},
		{nil, "the page shows no output, the command prints 5 lines"},
	} {
		err := MatchOutput(tc.shown, got)
		if assert.Error(t, err, "%q", tc.shown) {
			assert.Equal(t, tc.want, err.Error())
		}
	}
}

// TestFiles: the Markdown at the root and under docs/, nothing else.
func TestFiles(t *testing.T) {
	tree := fstest.MapFS{
		"README.md":               {},
		"BENCHMARKS.md":           {},
		"docs/sim.md":             {},
		"docs/commands/report.md": {},
		"docs/report.png":         {},
		"properties/doc.md":       {},
		"testdata/x.md":           {},
	}
	files, err := Files(tree)
	require.NoError(t, err)
	assert.Equal(t, []string{"BENCHMARKS.md", "README.md", "docs/commands/report.md", "docs/sim.md"}, files)

	cmds, err := Extract(fstest.MapFS{"README.md": {Data: []byte(page)}}, []string{"README.md"}, "np")
	require.NoError(t, err)
	require.NotEmpty(t, cmds)
	assert.Equal(t, "README.md:4", cmds[0].Where())
}
