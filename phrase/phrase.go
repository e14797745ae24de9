package phrase

import "strconv"

// Count is n and the noun, plural unless n is 1: "1 mutant", "0 mutants".
// The plural adds an s; nouns that do not take one use Noun.
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun, noun+"s")
}

// Noun is one when n is 1 and many otherwise: Noun(n, "piece", "pieces").
func Noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
