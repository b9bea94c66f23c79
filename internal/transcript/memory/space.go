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
	"container/heap"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// kinds as the rows hold them.
var kindCodes = []string{"", "message", "tool", "summary", "note"}

func kindCode(k string) uint8 {
	for i, s := range kindCodes {
		if s == k {
			return uint8(i)
		}
	}
	return 0
}

const noteCode = 4

// row is one chunk's place: its session (a slot of the space), its record and part, and
// its vector's scale (the int8 components times scale are the unit vector).
type row struct {
	slot  int32
	seq   int64
	part  uint16
	kind  uint8
	live  bool
	ts    int64
	scale float32
}

// space is one Agent's memory in one namespace: the vectors of one embedder, row-major
// int8, and the sessions they came from.
type space struct {
	ns, agent string
	emb       string // the embedder's id
	dims      int
	vecs      []int8
	bits      []uint64 // each row's sign bits, words per row: the prefilter of a large scan
	rows      []row
	free      []int32
	live      int
	slots     []*session // by slot; nil when free
	freeSlots []int32
	byID      map[string]*session
}

// session is a session the space indexes: how far (upto), and its live rows in order.
type session struct {
	ns, sid, key string
	slot         int32
	upto         int64
	rows         []int32
}

func newSpace(ns, agent, emb string, dims int) *space {
	return &space{ns: ns, agent: agent, emb: emb, dims: dims, byID: map[string]*session{}}
}

// addSession gives s a slot.
func (sp *space) addSession(s *session) {
	sp.byID[s.sid] = s
	if n := len(sp.freeSlots); n > 0 {
		s.slot = sp.freeSlots[n-1]
		sp.freeSlots = sp.freeSlots[:n-1]
		sp.slots[s.slot] = s
		return
	}
	s.slot = int32(len(sp.slots))
	sp.slots = append(sp.slots, s)
}

// dropSession frees s's rows and slot.
func (sp *space) dropSession(s *session) {
	for _, r := range s.rows {
		sp.freeRow(r)
	}
	s.rows = nil
	delete(sp.byID, s.sid)
	sp.slots[s.slot] = nil
	sp.freeSlots = append(sp.freeSlots, s.slot)
}

func (sp *space) freeRow(r int32) {
	if !sp.rows[r].live {
		return
	}
	sp.rows[r].live = false
	sp.free = append(sp.free, r)
	sp.live--
}

// add stores a chunk of s with its unit vector v, and forgets s's oldest chunk that is not
// a note once s holds more than MaxChunksPerSession.
func (sp *space) add(s *session, seq int64, part int, kind uint8, ts int64, q []int8, scale float32) {
	rw := row{slot: s.slot, seq: seq, part: uint16(part), kind: kind, live: true, ts: ts, scale: scale}
	var r int32
	if n := len(sp.free); n > 0 {
		r = sp.free[n-1]
		sp.free = sp.free[:n-1]
		sp.rows[r] = rw
		copy(sp.vecs[int(r)*sp.dims:], q)
		sp.signBits(sp.bits[int(r)*sp.words():int(r+1)*sp.words()], q)
	} else {
		r = int32(len(sp.rows))
		sp.rows = append(sp.rows, rw)
		sp.vecs = append(sp.vecs, q...)
		n := len(sp.bits)
		sp.bits = append(sp.bits, make([]uint64, sp.words())...)
		sp.signBits(sp.bits[n:], q)
	}
	sp.live++
	s.rows = append(s.rows, r)
	if len(s.rows) > MaxChunksPerSession {
		for i, old := range s.rows {
			if sp.rows[old].kind != noteCode {
				sp.freeRow(old)
				s.rows = append(s.rows[:i], s.rows[i+1:]...)
				break
			}
		}
	}
}

// Quantize is v (a unit vector) as int8 components and the scale that restores it.
func Quantize(v []float32) ([]int8, float32) {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	q := make([]int8, len(v))
	if m == 0 {
		return q, 0
	}
	k := 127 / m
	for i, x := range v {
		q[i] = int8(math.Round(float64(x * k)))
	}
	return q, m / 127
}

// dot is the int8 dot product, unrolled: most of a search is this loop.
func dot(a, b []int8) int32 {
	var s0, s1, s2, s3 int32
	n := len(a) &^ 3
	b = b[:len(a)]
	for i := 0; i < n; i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for i := n; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// scored is a row and its cosine with the query.
type scored struct {
	row int32
	sim float32
}

// topK keeps the k best, worst on top.
type topK []scored

func (h topK) Len() int { return len(h) }
func (h topK) Less(i, j int) bool {
	return h[i].sim < h[j].sim || h[i].sim == h[j].sim && h[i].row < h[j].row
}
func (h topK) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *topK) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *topK) Pop() any     { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

// Bounds of the prefilter: a space of more live rows than exactScan is scanned first by
// the Hamming distance of hashed sign bits (8 words a row at 256 dimensions), and only the
// prefilter rows nearest, at least prefilterMin and prefilterPerHit per hit asked, are
// scored by their int8 vectors. The bench's recall@10 against exact float search measures
// what this costs.
const (
	exactScan       = 20000
	prefilterMin    = 1024
	prefilterPerHit = 64
)

// rowBytes is what one chunk holds in memory: its vector, hash bits, row and place in its
// session's list.
func (sp *space) rowBytes() int64 { return chunkBytes(sp.dims) }

func chunkBytes(dims int) int64 { return int64(dims + 8*hasherFor(dims).words() + 48 + 4) }

func (sp *space) words() int { return hasherFor(sp.dims).words() }

// signBits sets dst to q's sign bits under the space's random hyperplanes.
func (sp *space) signBits(dst []uint64, q []int8) { hasherFor(sp.dims).bits(dst, q) }

// hasher is a fast random-hyperplane hash (SimHash): the signs of H·D·q for rounds random
// ±1 diagonals D and the Walsh-Hadamard matrix H, so an angle is estimated from the
// Hamming distance of the bits. The signs of q's own components would not do: a vector
// from hashed features is mostly zeros, and their signs say nothing.
type hasher struct {
	n     int // the power of two at or above dims
	flips [][]int32
}

const hashRounds = 2

var hashers sync.Map // dims -> hasher: fixed seeds, so every space of one dims hashes alike

func hasherFor(dims int) hasher {
	if h, ok := hashers.Load(dims); ok {
		return h.(hasher)
	}
	n := 1
	for n < dims {
		n *= 2
	}
	h := hasher{n: n}
	rng := rand.New(rand.NewPCG(uint64(dims), 0x6d656d6f7279))
	for range hashRounds {
		f := make([]int32, n)
		for i := range f {
			f[i] = int32(rng.IntN(2)*2 - 1)
		}
		h.flips = append(h.flips, f)
	}
	hashers.Store(dims, h)
	return h
}

func (h hasher) words() int { return (hashRounds*h.n + 63) / 64 }

func (h hasher) bits(dst []uint64, q []int8) {
	clear(dst)
	buf := make([]int32, h.n)
	for r, f := range h.flips {
		for i := range buf {
			buf[i] = 0
			if i < len(q) {
				buf[i] = int32(q[i]) * f[i]
			}
		}
		fwht(buf)
		for i, y := range buf {
			if y > 0 {
				b := r*h.n + i
				dst[b/64] |= 1 << (b % 64)
			}
		}
	}
}

// fwht is the in-place Walsh-Hadamard transform of a (its length a power of two).
func fwht(a []int32) {
	for h := 1; h < len(a); h *= 2 {
		for i := 0; i < len(a); i += 2 * h {
			for j := i; j < i+h; j++ {
				x, y := a[j], a[j+h]
				a[j], a[j+h] = x+y, x-y
			}
		}
	}
}

// search returns the k live rows nearest q (quantized, with its scale), best first, among
// those whose session ok admits (by slot), and notes too with notes.
func (sp *space) search(q []int8, qscale float32, k int, ok []bool, notes bool) []scored {
	admit := func(rw *row) bool { return rw.live && (notes && rw.kind == noteCode || ok[rw.slot]) }
	h := make(topK, 0, k+1)
	score := func(i int) {
		d := sp.dims
		sim := float32(dot(q, sp.vecs[i*d:i*d+d])) * qscale * sp.rows[i].scale
		if len(h) < k {
			heap.Push(&h, scored{int32(i), sim})
		} else if sim > h[0].sim {
			h[0] = scored{int32(i), sim}
			heap.Fix(&h, 0)
		}
	}
	if sp.live <= exactScan {
		for i := range sp.rows {
			if admit(&sp.rows[i]) {
				score(i)
			}
		}
	} else {
		for _, i := range sp.prefilter(q, max(prefilterMin, prefilterPerHit*k), admit) {
			score(int(i))
		}
	}
	out := make([]scored, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scored)
	}
	return out
}

// prefilter is the admitted rows whose sign bits are nearest q's, at least n of them (all
// of a distance that reaches n): a histogram of distances finds the cut without sorting.
func (sp *space) prefilter(q []int8, n int, admit func(*row) bool) []int32 {
	w := sp.words()
	qb := make([]uint64, w)
	sp.signBits(qb, q)
	dist := make([]uint16, len(sp.rows))
	hist := make([]int, 64*w+1)
	const skip = ^uint16(0)
	for i := range sp.rows {
		if !admit(&sp.rows[i]) {
			dist[i] = skip
			continue
		}
		var d int
		b := sp.bits[i*w : i*w+w]
		for j := range qb {
			d += bits.OnesCount64(qb[j] ^ b[j])
		}
		dist[i] = uint16(d)
		hist[d]++
	}
	cut, seen := 0, 0
	for cut < len(hist)-1 && seen+hist[cut] < n {
		seen += hist[cut]
		cut++
	}
	out := make([]int32, 0, seen+hist[cut])
	for i, d := range dist {
		if d != skip && int(d) <= cut {
			out = append(out, int32(i))
		}
	}
	return out
}

// Exact is the float cosine search the int8 index is measured against: the k rows of vecs
// (unit vectors) nearest q, best first.
func Exact(vecs [][]float32, q []float32, k int) []int {
	h := make(topK, 0, k+1)
	for i, v := range vecs {
		var s float32
		for j := range v {
			s += v[j] * q[j]
		}
		if len(h) < k {
			heap.Push(&h, scored{int32(i), s})
		} else if s > h[0].sim {
			h[0] = scored{int32(i), s}
			heap.Fix(&h, 0)
		}
	}
	out := make([]int, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = int(heap.Pop(&h).(scored).row)
	}
	return out
}
