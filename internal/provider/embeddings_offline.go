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

package provider

import (
	"context"
	"hash/fnv"
	"strings"
	"unicode"
)

// Offline is the scripted provider's embedder, for tests and runs without a network: a
// deterministic bag of features hashed into N dimensions. Each word (lower case, a few
// English suffixes cut, common function words dropped) counts fully, and its character
// trigrams count a quarter each, so "rotates" meets "rotation" and "deploys" meets
// "deploy". It knows no synonyms: "password" and "secret" share nothing, and a paraphrase
// is found only through the words it shares. It is not a language model; use a real
// embeddings provider for recall by meaning.
type Offline struct{ N int }

// Dims implements Embedder.
func (o Offline) Dims() int { return o.N }

// Local says it calls no provider: no rate bounds it.
func (Offline) Local() bool { return true }

// Embed implements Embedder; its token count is the words it read.
func (o Offline) Embed(_ context.Context, texts []string) ([][]float32, int64, error) {
	out := make([][]float32, len(texts))
	var tokens int64
	for i, t := range texts {
		v, n := o.vector(t)
		out[i], tokens = v, tokens+int64(n)
	}
	return out, tokens, nil
}

// vector is one text's features, normalized; a text with no feature is a zero vector's
// stand-in, the first axis, so every text has a direction.
func (o Offline) vector(text string) ([]float32, int) {
	v := make([]float32, o.N)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
	for _, w := range words {
		if stopWords[w] {
			continue
		}
		w = Stem(w)
		o.add(v, "w:"+w, 1)
		g := "^" + w + "$"
		r := []rune(g)
		for j := 0; j+3 <= len(r); j++ {
			o.add(v, "g:"+string(r[j:j+3]), 0.25)
		}
	}
	if !Normalize(v) {
		v[0] = 1
	}
	return v, len(words)
}

// add puts weight w on feature f's axis, with a sign from the hash so features cancel as
// often as they collide.
func (o Offline) add(v []float32, f string, w float32) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(f))
	x := h.Sum64()
	if x>>63 == 1 {
		w = -w
	}
	v[x%uint64(o.N)] += w
}

// Stem cuts a few English endings so a word's forms share a feature: plural s, es, ies,
// -ing, -ed, -ly, -ation. It is a crude, rule-only stemmer, enough for tests.
func Stem(w string) string {
	for _, s := range []struct{ suffix, repl string }{{"ation", "ate"}, {"ies", "y"}, {"ing", ""}, {"ed", ""},
		{"ly", ""}, {"es", ""}, {"s", ""}} {
		if len(w) > len(s.suffix)+2 && strings.HasSuffix(w, s.suffix) {
			w = strings.TrimSuffix(w, s.suffix) + s.repl
			break
		}
	}
	// rotate and rotat, change and chang: a final e is not a feature.
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// stopWords carry no topic: dropped so a question's "when does the" does not match every
// sentence with "the".
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if of on in at to for from by with about as into
		is are was were be been being do does did done has have had it its this that these those
		what when where which who whom why how i you he she we they me him her us them my your our
		their not no so than then there here can could will would shall should may might must`) {
		stopWords[w] = true
	}
}
