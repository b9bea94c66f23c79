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

package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

func init() {
	register("search", benchSearch)
}

// The search corpus: 10,000 sessions of 100 messages, twelve words each drawn from a Zipf
// vocabulary of 20,000 words, as conversations use words.
const (
	searchSessions    = 10000
	searchPerSession  = 100
	searchVocabulary  = 20000
	searchWordsPerMsg = 12
	searchQueries     = 200
)

func benchSearch() ([]Figure, error) {
	dir, err := os.MkdirTemp("", "search-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	// Appends with and without the index, side by side: three rounds each, alternating, so
	// that a change of the machine's load falls on both; the medians compared.
	var plain, indexed []float64
	for round := range 3 {
		p, err := benchAppendRate(filepath.Join(dir, fmt.Sprintf("append-plain-%d", round)))
		if err != nil {
			return nil, err
		}
		ix, err := search.Open(filepath.Join(dir, fmt.Sprintf("append-index-%d.db", round)), search.Options{})
		if err != nil {
			return nil, err
		}
		i, err := benchAppendRateIndexed(filepath.Join(dir, fmt.Sprintf("append-indexed-%d", round)), ix)
		_ = ix.Close()
		if err != nil {
			return nil, err
		}
		plain, indexed = append(plain, p), append(indexed, i)
	}
	figs := []Figure{Compare("search_append_per_s_indexed", medianOf(indexed), medianOf(plain), "appends/s",
		"about the appends/s without the index (128 appenders, one session, durable)")}

	root := filepath.Join(dir, "transcripts")
	if err := writeSearchCorpus(root); err != nil {
		return nil, err
	}
	start := time.Now()
	ix, err := search.Open(filepath.Join(dir, "index.db"), search.Options{})
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	st, err := store.OpenFileStore(root, ix.StoreOptions()...)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ix.Start(st)
	ctx := context.Background()
	if err := ix.Sync(ctx); err != nil {
		return nil, err
	}
	rebuild := time.Since(start).Seconds()
	bytes, err := ix.Bytes(ctx)
	if err != nil {
		return nil, err
	}
	total := float64(searchSessions * searchPerSession)
	figs = append(figs,
		Figure{Name: "search_rebuild_s", Value: rebuild, Unit: "s", Target: "1,000,000 messages read from their JSONL files and indexed"},
		Figure{Name: "search_index_bytes_per_message", Value: float64(bytes) / total, Unit: "bytes"})

	// One-word queries of words of middle frequency (ranks 300..500), a page of 20 with
	// excerpts read from the transcripts.
	var lat []float64
	var hits int
	for i := range searchQueries {
		q := transcript.SearchQuery{Namespace: benchNS, Text: searchWord(300 + i%200), Limit: 20}
		t0 := time.Now()
		res, err := ix.Search(ctx, q)
		if err != nil {
			return nil, err
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
		hits += len(res.Hits)
	}
	if hits == 0 {
		return nil, fmt.Errorf("the queries found nothing")
	}
	slices.Sort(lat)
	figs = append(figs,
		Figure{Name: "search_p50_ms", Value: lat[len(lat)/2], Unit: "ms", Target: "< 50 (one word, 10,000 sessions, 1,000,000 messages)"},
		Figure{Name: "search_p99_ms", Value: lat[len(lat)*99/100], Unit: "ms"})
	return figs, nil
}

// benchAppendRateIndexed is benchAppendRate with the index fed by the store's hooks and
// its indexer running, as in the transcript-store.
func benchAppendRateIndexed(root string, ix *search.Index) (float64, error) {
	st, err := store.OpenFileStore(root, ix.StoreOptions()...)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	ix.Start(st)
	return appendRate(st)
}

// searchWord is the vocabulary's word of rank r (0 is the most frequent).
func searchWord(r int) string { return "w" + strconv.Itoa(r) }

// writeSearchCorpus writes the corpus's transcripts directly, as the store would have.
func writeSearchCorpus(root string) error { return writeCorpus(root, searchSessions, searchPerSession) }

// writeCorpus writes sessions transcripts of perSession messages of the search corpus's
// words, as agent bench's sub-agent sessions.
func writeCorpus(root string, sessions, perSession int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.07, 1, searchVocabulary-1)
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := filepath.Join(root, benchNS)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	var words []string
	for s := range sessions {
		id := fmt.Sprintf("s%05d", s)
		f, err := os.Create(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 256<<10)
		h, err := transcript.EncodeHeader(transcript.SessionHeader{Namespace: benchNS, SessionID: id,
			SessionKey: "agent:bench:subagent:" + id, CreatedAt: ts})
		if err == nil {
			_, err = w.Write(h)
		}
		for i := 1; err == nil && i <= perSession; i++ {
			words = words[:0]
			for range searchWordsPerMsg {
				words = append(words, searchWord(int(zipf.Uint64())))
			}
			role := transcript.RoleUser
			if rng.IntN(2) == 0 {
				role = transcript.RoleAssistant
			}
			rec := transcript.Record{Seq: int64(i), ID: fmt.Sprintf("%s-%d", id, i), TS: ts.Add(time.Duration(i) * time.Second),
				Message: transcript.Message{Role: role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: strings.Join(words, " ")}}}}
			var line []byte
			if line, err = transcript.EncodeRecord(&rec); err == nil {
				_, err = w.Write(line)
			}
		}
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func medianOf(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[len(s)/2]
}
