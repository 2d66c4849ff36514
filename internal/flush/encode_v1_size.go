package flush

import (
	"sort"

	"github.com/goxray/xray/fdr"
)

// Choosing a version-1 file's buffer_size: every ThreadBuffer of the file
// has that size, so it trades the padding at the end of each goroutine's
// last ThreadBuffer against the framing every ThreadBuffer repeats.

// v1Sizes are the buffer_size candidates, all multiples of 64: every one
// from 128 bytes to 4 KiB, where goroutines holding a few records make the
// file size a step function with close steps (a 320-byte buffer_size can
// beat both 256 and 384 by 5%), then steps of 1/8 up to 16 MiB.
var v1Sizes = func() []int {
	var s []int
	for b := 128; b <= 4096; b += 64 {
		s = append(s, b)
	}
	for b := 4096 * 9 / 8; b <= 16<<20; b = b * 9 / 8 {
		s = append(s, b&^63)
	}
	return s
}()

// minV1Size is the smallest buffer_size that holds any planned record, or
// the anchor, alone in a ThreadBuffer with an acceptable remainder, so the
// layout always makes progress.
func minV1Size(plans []goPlan) int {
	need := v1AnchorSize
	for i := range plans {
		if plans[i].parent != 0 {
			need = max(need, fdr.MetadataSize+len(fdr.AppendLineagePayload(nil, plans[i].lineage())))
		}
		need = max(need, plans[i].maxRec)
	}
	return (v1Framing + need + minFiller + 7) &^ 7
}

// v1Shortlist is how many candidates, the best by estimate, are laid out
// exactly to choose buffer_size.
const v1Shortlist = 3

// choose picks buffer_size, the candidate giving the smallest file, and
// returns it with each plan's ThreadBuffer count at that size. Candidates
// are ranked by estimateV1, which is cheap but blind to the space a
// ThreadBuffer closed early leaves (up to a record's size when large
// records meet small buffers); the best few are then laid out exactly
// (dry runs), which costs a pass over the records each.
func (v *v1Writer) choose(plans []goPlan) (int, []int, error) {
	lo := (minV1Size(plans) + 63) &^ 63
	sizes := []int{lo}
	for _, b := range v1Sizes {
		if b > lo {
			sizes = append(sizes, b)
		}
	}
	type cand struct {
		size int
		est  int64
	}
	var cs []cand
	for _, b := range sizes {
		// Skip sizes that would give a goroutine so many ThreadBuffers
		// that their WallClocks could not increase (see wallClock).
		if est, most := estimateV1(plans, v.min, b); most <= maxV1Buffers || b == sizes[len(sizes)-1] {
			cs = append(cs, cand{b, est})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].est < cs[j].est })
	best, bestTotal := 0, int64(-1)
	var bestN []int
	for _, c := range cs[:min(len(cs), v1Shortlist)] {
		total, n, err := v.count(plans, c.size)
		if err != nil {
			return 0, nil, err
		}
		if bestTotal < 0 || total < bestTotal {
			best, bestTotal, bestN = c.size, total, n
		}
	}
	return best, bestN, nil
}

// estimateV1 estimates the size of the file with buffer_size b. Every
// goroutine pays for whole ThreadBuffers, so large buffers waste the unused
// end of each goroutine's last one, and small buffers pay 64 bytes of
// framing each. A goroutine is charged the buffers its body fills at full
// capacity. It also returns the most buffers a goroutine is charged.
func estimateV1(plans []goPlan, min uint64, b int) (total, most int64) {
	per := int64(b - v1Framing)
	total = int64(fdr.HeaderSize)
	for i := range plans {
		gp := &plans[i]
		// Records, and a NewCPUId wherever the CPU changes; TSCWraps are
		// rare (deltas above 2^31 ticks) and left out.
		body := int64(gp.recBytes + gp.cpuSwitches*fdr.MetadataSize)
		if gp.parent != 0 {
			body += int64(fdr.MetadataSize + len(fdr.AppendLineagePayload(nil, gp.lineage())))
		} else if gp.first > min {
			body += v1AnchorSize
		}
		n := max(1, (body+per-1)/per)
		total += n * int64(b)
		most = max(most, n)
	}
	if len(plans) == 0 {
		total += int64(b)
	}
	return total, most
}

// count lays plans out with buffer_size size without writing anything and
// returns the file's size and each plan's ThreadBuffer count.
func (v *v1Writer) count(plans []goPlan, size int) (int64, []int, error) {
	v.size, v.cap, v.dry = size, size-v1Framing, true
	total := int64(fdr.HeaderSize)
	if len(plans) == 0 {
		total += int64(size)
	}
	n := make([]int, len(plans))
	for i := range plans {
		gp := &plans[i]
		k, err := v.goroutine(gp, gp.first > v.min)
		if err != nil {
			return 0, nil, err
		}
		n[i] = k
		total += int64(k) * int64(size)
	}
	return total, n, nil
}
