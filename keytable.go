package travelrule

import (
	"bytes"
	"math/bits"
)

// keyPart is the bytes of a credential no shown identifier holds ("trp_live").
const keyPart = 8

// keyTable finds in a text keyPart consecutive bytes of one of its keys,
// in any case, or a whole key shorter than that. It is made once per key
// (a token when the token cache takes it, the client's credential) and
// only read after.
type keyTable struct {
	short   []string   // the keys shorter than keyPart
	windows []uint64   // the keys' windows: open addressing, 0 empty, at most half full
	filter  [32]uint64 // a bit per window's hash, so that most misses read no table
}

func newKeyTable(keys ...string) *keyTable {
	n := 0
	for _, k := range keys {
		n += max(0, len(k)-keyPart+1)
	}
	kt := &keyTable{}
	if n > 0 {
		kt.windows = make([]uint64, 1<<bits.Len(uint(2*n)))
	}
	for _, k := range keys {
		if k != "" && len(k) < keyPart {
			kt.short = append(kt.short, k)
		}
		for i, w := 0, uint64(0); len(k) >= keyPart && i < len(k); i++ {
			if w = w<<8 | uint64(lower(k[i])); i >= keyPart-1 && w != 0 {
				kt.windows[kt.probe(w)] = w
				h := w * 0x9e3779b97f4a7c15 >> 53
				kt.filter[h/64] |= 1 << (h % 64)
			}
		}
	}
	return kt
}

// in reports whether t holds a key's part.
func (kt *keyTable) in(t []byte) bool {
	for _, k := range kt.short {
		for i := 0; i+len(k) <= len(t); i++ {
			if bytes.EqualFold(t[i:i+len(k)], []byte(k)) {
				return true
			}
		}
	}
	for i, w := 0, uint64(0); kt.windows != nil && i < len(t); i++ {
		if w = w<<8 | uint64(lower(t[i])); i < keyPart-1 || w == 0 {
			continue
		}
		if h := w * 0x9e3779b97f4a7c15 >> 53; kt.filter[h/64]&(1<<(h%64)) != 0 && kt.windows[kt.probe(w)] == w {
			return true
		}
	}
	return false
}

// probe returns the slot of w in the windows' table, or the empty one it
// would go in.
func (kt *keyTable) probe(w uint64) int {
	j := int(w*0x9e3779b97f4a7c15>>40) & (len(kt.windows) - 1)
	for kt.windows[j] != 0 && kt.windows[j] != w {
		j = (j + 1) & (len(kt.windows) - 1)
	}
	return j
}
