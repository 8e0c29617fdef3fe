package main

import "strings"

// suggest returns the name among names that typed most likely meant, or ""
// when none is near: the first at the least edit distance, when that
// distance is at most a third of the name's length (at least 1), else
// the one name that typed begins, when typed has 3 letters or more.
func suggest(typed string, names []string) string {
	best, bestDist := "", -1
	for _, name := range names {
		d := editDistance(typed, name)
		if d <= max(1, len(name)/3) && (bestDist < 0 || d < bestDist) {
			best, bestDist = name, d
		}
	}
	if best != "" || len([]rune(typed)) < 3 {
		return best
	}
	for _, name := range names {
		if len(name) > len(typed) && strings.HasPrefix(name, typed) {
			if best != "" {
				return "" // more than one
			}
			best = name
		}
	}
	return best
}

// editDistance is the number of one-character insertions, deletions,
// substitutions and swaps of two neighbours that turn a into b (the
// optimal string alignment distance), counted in runes.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
