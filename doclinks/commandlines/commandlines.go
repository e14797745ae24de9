package commandlines

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Command is one command line of the program a page shows.
type Command struct {
	// File is the Markdown file, slash-separated, relative to the root of
	// the tree it was read from; Line is the command's first line, from 1.
	File string
	Line int
	// Text is the line as written, without the prompt, its continuation
	// lines joined by one space.
	Text string
	// Args are the words after the program's name, unquoted as the shell
	// would, up to the end of the simple command (a pipe, &&, ;, a
	// comment), without redirections. A synopsis's words run to the end of
	// the line, its | alternatives included.
	Args []string
	// Synopsis says the line documents a usage rather than a command to
	// run (see Usage).
	Synopsis bool
	// Output are the lines a console block shows under the command, with
	// the block's indentation removed; nil when it shows none.
	Output []string
}

// Where is "file:line", for messages.
func (c Command) Where() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// Files lists the Markdown files that document the program, sorted: those
// at the root of the tree and every one under docs/.
func Files(fsys fs.FS) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && p != "docs" && !strings.HasPrefix(p, "docs/") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// Extract reads files from fsys and returns the command lines of program
// they show, in file and line order.
func Extract(fsys fs.FS, files []string, program string) ([]Command, error) {
	var all []Command
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		all = append(all, Parse(f, string(data), program)...)
	}
	return all, nil
}

// Parse returns the command lines of program that one Markdown file,
// named file in the results, shows.
func Parse(file, markdown, program string) []Command {
	var out []Command
	for _, b := range fencedBlocks(markdown) {
		out = append(out, b.commands(file, program)...)
	}
	return out
}

// block is a fenced code block: its info string's first word and its
// lines, the first of which is line first of the file.
type block struct {
	lang  string
	first int
	lines []string
}

var fenceRE = regexp.MustCompile("^( {0,3})(```+|~~~+)\\s*([^`\\s]*)")

func fencedBlocks(markdown string) []block {
	var blocks []block
	lines := strings.Split(markdown, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence := m[1], m[2]
		b := block{lang: strings.ToLower(m[3]), first: i + 2}
		for i++; i < len(lines); i++ {
			trimmed := strings.TrimLeft(lines[i], " ")
			if strings.HasPrefix(trimmed, fence) && strings.TrimRight(strings.TrimLeft(trimmed, fence[:1]), " ") == "" {
				break
			}
			b.lines = append(b.lines, strings.TrimPrefix(lines[i], indent))
		}
		blocks = append(blocks, b)
	}
	return blocks
}

const prompt = "$ "

func (b block) commands(file, program string) []Command {
	console := false
	for _, l := range b.lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), prompt) {
			console = true
		}
	}
	shell := b.lang == "sh" || b.lang == "shell" || b.lang == "bash"
	if !console && !shell {
		return nil
	}
	var out []Command
	for i := 0; i < len(b.lines); {
		start := i
		text := strings.TrimLeft(b.lines[i], " ")
		i++
		if console {
			if !strings.HasPrefix(text, prompt) {
				continue
			}
		}
		text = strings.TrimPrefix(text, prompt)
		for strings.HasSuffix(text, `\`) && i < len(b.lines) {
			text = strings.TrimRight(strings.TrimSuffix(text, `\`), " ") + " " + strings.TrimSpace(b.lines[i])
			i++
		}
		found := parseLine(text, program)
		if len(found) > 0 && found[len(found)-1].Synopsis {
			for i < len(b.lines) && synopsisContinues(b.lines[i]) {
				text = strings.TrimRight(text, " ") + " " + strings.TrimSpace(b.lines[i])
				i++
			}
			found = parseLine(text, program)
		}
		var output []string
		if console {
			for i < len(b.lines) && !strings.HasPrefix(strings.TrimLeft(b.lines[i], " "), prompt) {
				output = append(output, b.lines[i])
				i++
			}
			for len(output) > 0 && strings.TrimSpace(output[len(output)-1]) == "" {
				output = output[:len(output)-1]
			}
		}
		for _, c := range found {
			c.File, c.Line, c.Text = file, b.first+start, strings.TrimSpace(text)
			if len(output) > 0 {
				c.Output = output
			}
			out = append(out, c)
		}
	}
	return out
}

// synopsisContinues says whether line continues a synopsis without a
// backslash: indented, and starting with an option in brackets or a flag.
func synopsisContinues(line string) bool {
	trimmed := strings.TrimLeft(line, " \t")
	return trimmed != line && trimmed != "" && strings.ContainsRune("[(-", rune(trimmed[0]))
}

// parseLine finds the program's commands in one logical shell line.
func parseLine(text, program string) []Command {
	tokens := lex(text)
	var out []Command
	for start := 0; start < len(tokens); {
		end := start
		for end < len(tokens) && !tokens[end].op {
			end++
		}
		if at := programAt(tokens[start:end], program); at >= 0 {
			args := tokens[start+at+1 : end]
			if synopsis(args) {
				// A synopsis's | are alternatives, not pipes: its words run
				// to the end of the line.
				return append(out, Command{Args: words(tokens[start+at+1:]), Synopsis: true})
			}
			out = append(out, Command{Args: withoutRedirections(words(args))})
		}
		start = end + 1
	}
	return out
}

var assignmentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// programAt returns the index of the program's name in a simple command,
// or -1 when the command does not run the program.
func programAt(cmd []token, program string) int {
	i := 0
	for i < len(cmd) && !cmd[i].quoted && assignmentRE.MatchString(cmd[i].text) {
		i++
	}
	if i < len(cmd) && path.Base(cmd[i].text) == "time" {
		for i++; i < len(cmd) && strings.HasPrefix(cmd[i].text, "-"); i++ {
		}
	}
	switch {
	case i < len(cmd) && path.Base(cmd[i].text) == program:
		return i
	case i+2 < len(cmd) && cmd[i].text == "go" && cmd[i+1].text == "run" && path.Base(cmd[i+2].text) == program:
		return i + 2
	}
	return -1
}

var placeholderRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*( [A-Z][A-Z0-9_]*)*(\.\.\.|\.\.[A-Z][A-Z0-9_]*|,\.\.\.)?$`)

// synopsis says whether the words of a simple command document a usage:
// an option in brackets, alternatives in parentheses, or an upper-case
// placeholder. The words of the command a pipe feeds are not looked at:
// "| grep SIM" is no placeholder.
func synopsis(tokens []token) bool {
	for _, t := range tokens {
		if t.op {
			continue
		}
		if !t.quoted && strings.ContainsAny(t.text, "[]()") {
			return true
		}
		if placeholderRE.MatchString(t.text) {
			return true
		}
	}
	return false
}

func words(tokens []token) []string {
	out := make([]string, 0, len(tokens))
	for _, t := range tokens {
		out = append(out, t.text)
	}
	return out
}

var redirectionRE = regexp.MustCompile(`^(\d*|&)(>>?|<)(&\d+)?(.*)$`)

// withoutRedirections drops "> FILE", "2>&1" and the like: they are the
// shell's, not the program's.
func withoutRedirections(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		m := redirectionRE.FindStringSubmatch(args[i])
		if m == nil {
			out = append(out, args[i])
			continue
		}
		if m[3] == "" && m[4] == "" {
			i++ // the target is the next word
		}
	}
	return out
}

// token is a shell word, or an operator that ends a simple command (op):
// | || & && ;. quoted says part of the word was quoted, so that it is
// taken as written.
type token struct {
	text   string
	op     bool
	quoted bool
}

// lex splits a line into shell words and operators, removing quotes and
// backslashes as the shell does and stopping at a comment. It knows no
// expansions: $VAR and $(...) stay as written.
func lex(line string) []token {
	var tokens []token
	var cur strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			tokens = append(tokens, token{text: cur.String(), quoted: quoted})
		}
		cur.Reset()
		inWord, quoted = false, false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			return tokens
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord, quoted = true, true
			i += j + 1
		case c == '"':
			inWord, quoted = true, true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord, quoted = true, true
		case c == '>' || c == '<':
			// A redirection stays one word with its descriptor and, in
			// 2>&1 or >&2, the descriptor it points to.
			cur.WriteByte(c)
			inWord = true
			if i+1 < len(line) && line[i+1] == '>' {
				i++
				cur.WriteByte('>')
			}
			if i+1 < len(line) && line[i+1] == '&' {
				i++
				cur.WriteByte('&')
			}
		case c == '&' && i+1 < len(line) && line[i+1] == '>':
			cur.WriteByte(c)
			inWord = true
		case c == '|' || c == '&' || c == ';':
			flush()
			op := string(c)
			if (c == '|' || c == '&') && i+1 < len(line) && line[i+1] == c {
				op += string(c)
				i++
			}
			tokens = append(tokens, token{text: op, op: true})
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return tokens
}

// Usage is what a synopsis documents.
type Usage struct {
	// Words are the words before the first flag, brackets removed: the
	// subcommand's name, then any positional placeholder ("checkpoint",
	// "FILE").
	Words []string
	// Flags are the flags it shows, in order.
	Flags []UsageFlag
}

// UsageFlag is one flag of a synopsis.
type UsageFlag struct {
	// Name is as written: "--seed", "-f".
	Name string
	// Value is the value it is shown with ("N", "A..B", "1|2"); empty for
	// a flag shown alone, such as "[--json]".
	Value string
}

// Concrete returns the alternatives of the flag's value that are meant
// literally: those without an upper-case letter, which marks a
// placeholder ("1|2" gives 1 and 2; "N", "A..B" and "memory=P%" none).
func (f UsageFlag) Concrete() []string {
	var out []string
	for _, v := range strings.Split(f.Value, "|") {
		if v != "" && strings.ToLower(v) == v {
			out = append(out, v)
		}
	}
	return out
}

// Usage reads a synopsis's words (Args).
func (c Command) Usage() Usage {
	var u Usage
	args := c.Args
	for i := 0; i < len(args); i++ {
		w := strings.Trim(args[i], "[]()")
		if !strings.HasPrefix(w, "-") {
			if len(u.Flags) == 0 && w != "" && w != "|" {
				u.Words = append(u.Words, w)
			}
			continue
		}
		name, value, hasValue := strings.Cut(w, "=")
		f := UsageFlag{Name: name}
		closed := strings.HasSuffix(args[i], "]") || strings.HasSuffix(args[i], ")")
		switch {
		case hasValue:
			f.Value = value
		case !closed && i+1 < len(args) && args[i+1] != "|" && !strings.HasPrefix(strings.TrimLeft(args[i+1], "[("), "-"):
			i++
			f.Value = strings.TrimRight(args[i], "])")
			// "1|2" lexes as 1, |, 2: an alternative of values, not of
			// flags, when the word after | is not a flag.
			for i+2 < len(args) && args[i+1] == "|" && !strings.HasPrefix(strings.TrimLeft(args[i+2], "[("), "-") {
				f.Value += "|" + strings.TrimRight(args[i+2], "])")
				i += 2
			}
		}
		u.Flags = append(u.Flags, f)
	}
	return u
}

// MatchOutput says how the output a page shows (shown) differs from what
// the command printed (got), or nil when it is the same. A shown line
// that is only "…" or "..." stands for any number of lines, so that a
// page can shorten a long output; trailing spaces are not compared.
func MatchOutput(shown, got []string) error {
	isGap := func(l string) bool { t := strings.TrimSpace(l); return t == "…" || t == "..." }
	var segments [][]string
	seg := []string{}
	leadingGap := len(shown) > 0 && isGap(shown[0])
	trailingGap := len(shown) > 0 && isGap(shown[len(shown)-1])
	for _, l := range shown {
		if isGap(l) {
			if len(seg) > 0 {
				segments = append(segments, seg)
			}
			seg = []string{}
			continue
		}
		seg = append(seg, strings.TrimRight(l, " "))
	}
	if len(seg) > 0 {
		segments = append(segments, seg)
	}
	trimmed := make([]string, len(got))
	for i, l := range got {
		trimmed[i] = strings.TrimRight(l, " ")
	}
	pos := 0
	for n, s := range segments {
		first, last := n == 0, n == len(segments)-1
		switch {
		case first && !leadingGap:
			// Anchored at the start: the first line that differs says
			// what drifted.
			if err := compareAt(trimmed, s, 0); err != nil {
				return err
			}
			if last && !trailingGap && len(s) != len(trimmed) {
				return fmt.Errorf("the command prints %d lines, the page shows %d and no … for the rest", len(trimmed), len(s))
			}
			pos = len(s)
		case last && !trailingGap:
			p := max(pos, len(trimmed)-len(s))
			if err := compareAt(trimmed, s, p); err != nil {
				return err
			}
			pos = len(trimmed)
		default:
			at := -1
			for p := pos; p+len(s) <= len(trimmed); p++ {
				if compareAt(trimmed, s, p) == nil {
					at = p
					break
				}
			}
			if at < 0 {
				return fmt.Errorf("the shown lines from %q on are not in the output after its line %d", s[0], pos)
			}
			pos = at + len(s)
		}
	}
	if len(segments) == 0 && !leadingGap && len(trimmed) > 0 {
		return fmt.Errorf("the page shows no output, the command prints %d lines", len(trimmed))
	}
	return nil
}

// compareAt compares seg with got's lines from p on and names the first
// line that differs, counting the output's lines from 1.
func compareAt(got, seg []string, p int) error {
	for i, l := range seg {
		if p+i >= len(got) {
			return fmt.Errorf("output line %d: the page shows %q, the command prints no more lines", p+i+1, l)
		}
		if got[p+i] != l {
			return fmt.Errorf("output line %d: the page shows %q, the command prints %q", p+i+1, l, got[p+i])
		}
	}
	return nil
}
