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
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/memory"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/search"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcriptstore"
)

func init() {
	register("memory", benchMemory)
}

// The memory corpus: the search corpus's messages, 100 a session, one chunk each, embedded
// by the scripted provider's offline embedder (256 dimensions); 10k and 100k chunks.
const (
	memoryPerSession = 100
	memoryQueries    = 200
	memoryLagSamples = 50
)

var memoryScripted = transcript.EmbeddingsSpec{Provider: provider.Scripted, Dims: provider.DefaultEmbedDims}

func benchMemory() ([]Figure, error) {
	var figs []Figure
	for _, chunks := range []int{10000, 100000} {
		f, err := benchMemoryAt(chunks)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f...)
	}
	return figs, nil
}

// memoryBench is a store with both indexes over a written corpus.
type memoryBench struct {
	st    *store.FileStore
	words *search.Index
	mem   *memory.Index
}

func benchMemoryAt(chunks int) ([]Figure, error) {
	dir, err := os.MkdirTemp("", "memory-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "transcripts")
	sessions := chunks / memoryPerSession
	if err := writeCorpus(root, sessions, memoryPerSession); err != nil {
		return nil, err
	}
	words, mem, err := transcriptstore.OpenIndexes(root, logr.Discard())
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	defer words.Close()
	st, err := store.OpenFileStore(root, append(words.StoreOptions(), mem.StoreOptions()...)...)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ctx := context.Background()
	start := time.Now()
	words.Start(st)
	mem.Start(st)
	if err := mem.Register(benchNS, "bench", memoryScripted); err != nil {
		return nil, err
	}
	if err := mem.Sync(ctx); err != nil {
		return nil, err
	}
	if err := words.Sync(ctx); err != nil {
		return nil, err
	}
	rebuild := time.Since(start).Seconds()
	if got := mem.Chunks(); got != chunks {
		return nil, fmt.Errorf("memory holds %d chunks, want %d", got, chunks)
	}
	b := memoryBench{st: st, words: words, mem: mem}
	tag := fmt.Sprintf("%dk", chunks/1000)
	figs := []Figure{{Name: "memory_rebuild_s_" + tag, Value: rebuild, Unit: "s",
		Target: fmt.Sprintf("%d chunks read from their JSONL files, embedded offline and logged (with the full-text index beside it)", chunks)}}

	lat, recall, err := b.queries(ctx, sessions)
	if err != nil {
		return nil, err
	}
	target := ""
	if chunks == 100000 {
		target = "< 50 (100,000 chunks, meaning and words fused, 5 hits read back)"
	}
	figs = append(figs,
		Figure{Name: "memory_search_ms_p50_" + tag, Value: lat[len(lat)/2], Unit: "ms", Target: target},
		Figure{Name: "memory_search_ms_p99_" + tag, Value: lat[len(lat)*99/100], Unit: "ms"},
		Figure{Name: "memory_recall_at_10_" + tag, Value: recall, Unit: "ratio",
			Target: ">= 0.95 (the int8 index's top 10 against exact float search of the same vectors)"})
	if chunks == 100000 {
		runtime.GC()
		debug.FreeOSMemory()
		figs = append(figs,
			Figure{Name: "memory_rss_mib_100k", Value: processRSSMiB(os.Getpid()), Unit: "MiB",
				Target: "< 256 (this process: store, full-text and memory indexes over 100,000 chunks)"},
			Figure{Name: "memory_index_mib_100k", Value: float64(mem.Bytes()) / (1 << 20), Unit: "MiB"})
		lag, err := b.lag(ctx)
		if err != nil {
			return nil, err
		}
		figs = append(figs,
			Figure{Name: "memory_index_lag_ms_p50", Value: lag[len(lag)/2], Unit: "ms", Target: "append to searchable (the indexer's linger is 50 ms)"},
			Figure{Name: "memory_index_lag_ms_p99", Value: lag[len(lag)*99/100], Unit: "ms"})
	}
	return figs, nil
}

// queries asks memoryQueries recalls of four words of a random message each, as the tool
// does (meaning and words fused, hits read back), and measures the int8 index's recall@10
// against exact float search of the same vectors (meaning alone, no words).
func (b memoryBench) queries(ctx context.Context, sessions int) ([]float64, float64, error) {
	rng := rand.New(rand.NewPCG(5, 6))
	emb := provider.Offline{N: provider.DefaultEmbedDims}
	// The corpus's vectors, as the index embedded them.
	var texts []string
	var ids [][2]string
	for s := range sessions {
		sid := fmt.Sprintf("s%05d", s)
		page, err := b.st.Read(ctx, benchNS, sid, transcript.ReadOptions{Limit: memoryPerSession})
		if err != nil {
			return nil, 0, err
		}
		for _, r := range page.Messages {
			texts = append(texts, memory.Pieces(&r, false)[0].Text)
			ids = append(ids, [2]string{sid, fmt.Sprint(r.Seq)})
		}
	}
	vecs, _, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, 0, err
	}
	var lat []float64
	found, asked := 0, 0
	for range memoryQueries {
		fields := strings.Fields(texts[rng.IntN(len(texts))])
		rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		text := strings.Join(fields[:4], " ")
		q := transcript.MemoryQuery{Namespace: benchNS, Agent: "bench", Text: text, Limit: memory.DefaultLimit}
		t0 := time.Now()
		if _, err := b.mem.Recall(ctx, q, b.words); err != nil {
			return nil, 0, err
		}
		lat = append(lat, float64(time.Since(t0).Microseconds())/1000)

		q.Limit = 10
		res, err := b.mem.Recall(ctx, q, nil)
		if err != nil {
			return nil, 0, err
		}
		qv, _, _ := emb.Embed(ctx, []string{text})
		want := map[[2]string]bool{}
		for _, i := range memory.Exact(vecs, qv[0], 10) {
			want[ids[i]] = true
		}
		for _, h := range res.Hits {
			if want[[2]string{h.SessionID, fmt.Sprint(h.Seq)}] {
				found++
			}
		}
		asked += len(want)
	}
	slices.Sort(lat)
	return lat, float64(found) / float64(asked), nil
}

// lag appends a message and waits until the memory index holds its chunk.
func (b memoryBench) lag(ctx context.Context) ([]float64, error) {
	var lag []float64
	for i := range memoryLagSamples {
		before := b.mem.Chunks()
		m := transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText,
			Text: fmt.Sprintf("lag probe %d of the memory bench", i)}}}
		if _, err := b.st.Append(ctx, benchNS, "s00000", transcript.AppendRequest{Message: m}); err != nil {
			return nil, err
		}
		t0 := time.Now()
		for b.mem.Chunks() == before {
			if time.Since(t0) > 10*time.Second {
				return nil, fmt.Errorf("an appended message was not indexed within 10s")
			}
			time.Sleep(200 * time.Microsecond)
		}
		lag = append(lag, float64(time.Since(t0).Microseconds())/1000)
	}
	slices.Sort(lag)
	return lag, nil
}
