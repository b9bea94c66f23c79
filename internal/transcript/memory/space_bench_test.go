package memory

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkScan100k is the exact int8 scan of 100,000 chunks of 256 dimensions.
func BenchmarkScan100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	sp := newSpace("ns", "a", "e", 256)
	s := &session{sid: "s"}
	sp.addSession(s)
	v := make([]float32, 256)
	for i := range 100000 {
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		q, sc := Quantize(v)
		sp.add(s, int64(i), 0, 1, 0, q, sc)
		s.rows = s.rows[:0]
	}
	q, sc := Quantize(v)
	b.ResetTimer()
	for range b.N {
		sp.search(q, sc, 20, []bool{true}, true)
	}
}
