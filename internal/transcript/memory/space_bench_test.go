// Copyright 2026 The agent-session-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

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
