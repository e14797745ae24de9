package sim

// seeded is a splitmix64 generator (Steele, Lea and Flood, 2014): one
// 64-bit state, a fixed increment and a finaliser. It is written out here
// because math/rand is outside the determinism contract, and because a run
// must replay byte for byte on every Go version, which only an algorithm
// the package owns can promise.
type seeded struct{ state uint64 }

// NewSeeded returns the Source of a seeded run.
func NewSeeded(seed uint64) Source { return &seeded{state: seed} }

func (s *seeded) next() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// splitSalt sets a split stream's state apart from its parent's.
const splitSalt = 0x5851f42d4c957f2d

// Split starts a stream from the parent's state without drawing from the
// parent, through the same finaliser, so the two streams share no run of
// values.
func (s *seeded) Split() Source {
	child := &seeded{state: s.state ^ splitSalt}
	child.state = child.next()
	return child
}

// Intn is uniform: values at the top of the 64-bit range that would bias
// the modulo are drawn again (Lemire's rejection bound).
func (s *seeded) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	bound := uint64(n)
	limit := -bound % bound // 2^64 mod n
	for {
		v := s.next()
		if v >= limit {
			return int(v % bound)
		}
	}
}

// Chance never draws for the rates 0 and 1, so a kind that is off costs
// nothing and cannot shift the draws of the rest of the run.
func (s *seeded) Chance(rate float64) bool {
	switch {
	case rate <= 0:
		return false
	case rate >= 1:
		return true
	}
	return float64(s.next()>>11)/(1<<53) < rate
}
