package xrayflags

// What the parser suggests for an unknown flag: the other variable's flag
// of that name, or a known flag within two edits.

func lookup(defs []flagDef, name string) bool {
	for _, d := range defs {
		if d.name == name {
			return true
		}
	}
	return false
}

// nearest returns the known flag closest to name if it is within two edits
// (a typo), else "".
func nearest(defs []flagDef, name string) string {
	best, bestD := "", 3
	for _, d := range defs {
		if dist := editDistance(name, d.name, bestD); dist < bestD {
			best, bestD = d.name, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, or limit when
// it is at least limit (which bounds the work for long garbage names).
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// finish resolves what depends on several flags, once all are read, so
// that the last occurrence of each decides.
