package verify

import "strings"

// CommandLine joins words into one line a POSIX shell reads back as those
// words: the replay line of a failure, which a reader pastes as it is.
// Every replay line in nodeproof (suites, the simulation, the plugin
// checker, campaigns, fuzz targets) is written by it, so that all of them
// quote the same way.
func CommandLine(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = Quote(w)
	}
	return strings.Join(quoted, " ")
}

// Quote is s as one shell word: unchanged when it holds only characters no
// shell treats specially, else in single quotes (a quote inside becomes
// '\”).
func Quote(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe are the characters that mean nothing to sh, bash or zsh in a
// word (outside the first position of an assignment, which a replay line
// never starts with).
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@"
