package profile

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
)

// point is one observation for an affine fit: in the nest entry (group)
// key, at iteration vector vec, the value val.
type point struct {
	key string
	vec []int32
	val uint64
}

// affineFit is val = base[key] + Σ coeffs[l]·vec[l], modulo 2^64.
type affineFit struct {
	coeffs []int64
	bases  map[string]uint64
	keys   []string // group keys in first-seen order
	varied []bool   // whether level l took two values in some group
}

// fitAffine fits points of nl levels. Coefficients are shared by all
// groups; each group has its own base. It fails, saying why, when some
// point does not fit, or when a level's coefficient is not known.
//
// When a coefficient is known (RATIONALE). Level l's coefficient is known
// from two points of one group that differ at level l alone, one of them
// at 0 there, or, where no such pair exists for a level that varied
// (solveCoeffs), when the differences between the points of each group
// pin it down by exact elimination; every point must then fit it. A level at which no group saw
// the value take two values has no such pair, and its coefficient is
// unknown, not 0: the samples may hold one iteration of an outer loop (a
// profile that ran out of its probe budget inside it), or a loop that ran
// once, and 0 would claim that every other iteration of that level
// touches the same bytes (heat3d sampled in one time step fitted
// var1 + 640*u1 for var1 + 102400*u0 + 640*u1, and its kernels wrote one
// plane for all). The one exception is fixed[l] (nil for none): the
// caller proved from the code that the value cannot change from one
// iteration of level l to the next (an address in a register that the
// loop never writes, plus a displacement), so the coefficient is 0
// whether or not the level varied. Otherwise a level seen at one value
// only fails the fit, naming the level: the access (or trip count, or
// initial value) is then not affine as far as the profile knows, and
// what depends on it stays on the CPU.
func fitAffine(pts []point, nl int, fixed []bool) (*affineFit, error) {
	f := &affineFit{coeffs: make([]int64, nl), bases: map[string]uint64{}, varied: make([]bool, nl)}
	known := make([]bool, nl)
	// Each point is filed under its group and iteration vector, as bytes
	// (vecKey): the pairs below look up every point with each of its
	// levels zeroed, and a look-up by bytes allocates nothing. With a key
	// of two strings made anew for each look-up, the fits were 15% of the
	// analysis of heat3d at its medium size, most of it in those strings.
	groups := map[string]uint32{}
	var buf []byte
	vecKey := func(g uint32, vec []int32) []byte {
		buf = binary.LittleEndian.AppendUint32(buf[:0], g)
		for _, x := range vec {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
		}
		return buf
	}
	at := make(map[string]uint64, len(pts))
	var first [][]int32 // each group's first vector
	group := make([]uint32, len(pts))
	for i, p := range pts {
		g, seen := groups[p.key]
		if !seen {
			g = uint32(len(first))
			groups[p.key] = g
			first = append(first, p.vec)
			f.keys = append(f.keys, p.key)
		}
		group[i] = g
		k := vecKey(g, p.vec)
		if v, ok := at[string(k)]; ok {
			if v != p.val {
				return nil, fmt.Errorf("two values (%#x and %#x) at %s", v, p.val, fmtVec(p.vec))
			}
		} else {
			at[string(k)] = p.val
		}
		if seen {
			fv := first[g]
			for l := 0; l < nl && l < len(p.vec); l++ {
				if p.vec[l] != fv[l] {
					f.varied[l] = true
				}
			}
		}
	}
	tmp := make([]int32, nl)
	for i, p := range pts {
		for l := 0; l < nl && l < len(p.vec); l++ {
			if p.vec[l] == 0 {
				continue
			}
			copy(tmp, p.vec)
			tmp[l] = 0
			v0, ok := at[string(vecKey(group[i], tmp[:len(p.vec)]))]
			if !ok {
				continue
			}
			diff := int64(p.val - v0)
			if diff%int64(p.vec[l]) != 0 {
				return nil, fmt.Errorf("%#x at %s is not a whole step from %#x at %s", p.val, fmtVec(p.vec), v0, fmtVec(tmp[:len(p.vec)]))
			}
			c := diff / int64(p.vec[l])
			if known[l] && f.coeffs[l] != c {
				return nil, fmt.Errorf("level %d steps by %d and by %d", l, f.coeffs[l], c)
			}
			f.coeffs[l], known[l] = c, true
		}
	}
	depth := 0 // the levels the points reach
	for _, p := range pts {
		depth = max(depth, min(nl, len(p.vec)))
	}
	for l := 0; l < depth; l++ {
		if f.varied[l] && !known[l] && (l >= len(fixed) || !fixed[l]) {
			// No pair of points differs at l alone (a store on one side
			// of an if runs at scattered iterations): solve for the
			// coefficients from every point instead.
			if err := solveCoeffs(pts, depth, fixed, f.coeffs, known); err != nil {
				return nil, err
			}
			break
		}
	}
	for l := 0; l < depth; l++ {
		switch {
		case l < len(fixed) && fixed[l] && (!known[l] || f.coeffs[l] == 0):
			f.coeffs[l], known[l] = 0, true
		case l < len(fixed) && fixed[l]:
			return nil, fmt.Errorf("level %d steps by %d where the code cannot move it", l, f.coeffs[l])
		case f.varied[l] && !known[l]:
			return nil, fmt.Errorf("too few samples to fit level %d", l)
		case !known[l]:
			return nil, fmt.Errorf("level %d was seen at one value only: its step is unknown", l)
		}
	}
	for _, p := range pts {
		b := p.val
		for l := 0; l < nl && l < len(p.vec); l++ {
			b -= uint64(f.coeffs[l] * int64(p.vec[l]))
		}
		if ob, ok := f.bases[p.key]; ok && ob != b {
			return nil, fmt.Errorf("%#x at %s does not fit base %#x + %s", p.val, fmtVec(p.vec), ob, fmtCoeffs(f.coeffs, nil))
		}
		f.bases[p.key] = b
	}
	return f, nil
}

func fmtVec(v []int32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%s=%d", indexName(i), x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// indexName is the paper's name of level l's index: i, j, k, then l, m,
// n, then i6, i7, ….
func indexName(l int) string {
	names := []string{"i", "j", "k", "l", "m", "n"}
	if l < len(names) {
		return names[l]
	}
	return fmt.Sprintf("i%d", l)
}

// fmtCoeffs prints Σ coeffs[l]·index_l with base first when given.
func fmtCoeffs(c []int64, base *string) string {
	var parts []string
	if base != nil && *base != "" {
		parts = append(parts, *base)
	}
	for l, k := range c {
		switch {
		case k == 0:
			continue
		case k == 1:
			parts = append(parts, indexName(l))
		default:
			parts = append(parts, fmt.Sprintf("%d*%s", k, indexName(l)))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.ReplaceAll(strings.Join(parts, " + "), "+ -", "- ")
}

// solveCoeffs finds the coefficients of the levels below depth from the
// differences between the points of each group and its first point: each
// difference is a linear equation Σ c[l]·Δvec[l] = Δval (modulo 2^64,
// read as signed: the steps of addresses and counts are small), solved
// exactly over the rationals (Gauss-Jordan elimination, incrementally:
// an equation the basis already spans adds nothing, one it contradicts
// fails). A level's coefficient is known when the equations determine it
// alone, whatever the others' are: in reduced echelon form, its pivot row
// has no free level. Known coefficients must be whole numbers and agree
// with those known already (known, coeffs: the pairs of fitAffine), and
// are written there. Fixed levels (see fitAffine) are 0 and take no part.
// The caller still checks every point against the result.
func solveCoeffs(pts []point, depth int, fixed []bool, coeffs []int64, known []bool) error {
	isFixed := func(l int) bool { return l < len(fixed) && fixed[l] }
	// basis rows: coefficients of the depth levels, then the value;
	// pivot[r] is row r's pivot level.
	var basis [][]*big.Rat
	var pivot []int
	ref := map[string]point{}
	row := make([]*big.Rat, depth+1)
	for i := range row {
		row[i] = new(big.Rat)
	}
	tmp := new(big.Rat)
	for _, p := range pts {
		r, ok := ref[p.key]
		if !ok {
			ref[p.key] = p
			continue
		}
		zero := true
		for l := 0; l < depth; l++ {
			var d int64
			if !isFixed(l) && l < len(p.vec) && l < len(r.vec) {
				d = int64(p.vec[l]) - int64(r.vec[l])
			}
			row[l].SetInt64(d)
			zero = zero && d == 0
		}
		if zero {
			continue // the same iteration: fitAffine compared the values
		}
		row[depth].SetInt64(int64(p.val - r.val))
		for bi, b := range basis {
			if c := row[pivot[bi]]; c.Sign() != 0 {
				c = new(big.Rat).Set(c)
				for k := range row {
					row[k].Sub(row[k], tmp.Mul(c, b[k]))
				}
			}
		}
		pl := -1
		for l := 0; l < depth; l++ {
			if row[l].Sign() != 0 {
				pl = l
				break
			}
		}
		if pl < 0 {
			if row[depth].Sign() != 0 {
				return fmt.Errorf("%#x at %s does not fit the steps of the other points", p.val, fmtVec(p.vec))
			}
			continue
		}
		nr := make([]*big.Rat, depth+1)
		inv := new(big.Rat).Inv(row[pl])
		for k := range row {
			nr[k] = new(big.Rat).Mul(row[k], inv)
		}
		for _, b := range basis {
			if c := b[pl]; c.Sign() != 0 {
				c = new(big.Rat).Set(c)
				for k := range b {
					b[k].Sub(b[k], tmp.Mul(c, nr[k]))
				}
			}
		}
		basis, pivot = append(basis, nr), append(pivot, pl)
		if len(basis) == depth {
			break
		}
	}
	isPivot := make([]bool, depth)
	for _, l := range pivot {
		isPivot[l] = true
	}
	for bi, b := range basis {
		l := pivot[bi]
		alone := true
		for k := 0; k < depth; k++ {
			alone = alone && (isPivot[k] || b[k].Sign() == 0)
		}
		if !alone {
			continue
		}
		v := b[depth]
		if !v.IsInt() || !v.Num().IsInt64() {
			return fmt.Errorf("level %d steps by %s, no whole number", l, v.RatString())
		}
		c := v.Num().Int64()
		if known[l] && coeffs[l] != c {
			return fmt.Errorf("level %d steps by %d and by %d", l, coeffs[l], c)
		}
		coeffs[l], known[l] = c, true
	}
	return nil
}
