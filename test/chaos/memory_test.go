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

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/devcluster"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// memorySessions and memoryMessages shape the memory kill's workload: enough appends that
// the indexer is busy when the store dies.
const (
	memorySessions = 10
	memoryMessages = 20
)

// remembered is one acknowledged append: where it landed and what it said.
type remembered struct {
	sid  string
	seq  int64
	text string
}

// memoryKills: the transcript-store is SIGKILLed while its memory indexer is embedding what
// is being appended, once halfway through and once right after the last append. No chunk is
// lost: after the restarts the index is caught up from the transcripts and every
// acknowledged message is recalled by meaning, in its session, at its seq.
func (e *env) memoryKills(t *testing.T) {
	ctx := context.Background()
	ns := e.namespace(t, "chaos-memory")
	agent := transcript.MemoryAgent{Namespace: ns, Agent: "ops", Embeddings: transcript.EmbeddingsSpec{Provider: provider.Scripted, Dims: 256}}
	if err := e.store.RegisterMemory(ctx, agent); err != nil {
		t.Fatal(err)
	}
	for i := range memorySessions {
		h := transcript.SessionHeader{Namespace: ns, SessionID: fmt.Sprintf("mem-%d", i),
			SessionKey: fmt.Sprintf("agent:ops:task-%d", i), CreatedAt: time.Now()}
		if _, err := e.store.CreateSession(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	words := strings.Fields("deploy secret rotates friday cluster restart monday lunch orders noon " +
		"frontend typescript backend golang queue retry budget window token ledger archive")
	var acked atomic.Int64
	out := make(chan remembered, memorySessions*memoryMessages)
	appended := make(chan struct{})
	go func() {
		defer close(appended)
		for m := range memoryMessages {
			for s := range memorySessions {
				text := fmt.Sprintf("note %d of session %d:", m, s)
				for range 6 {
					text += " " + words[rng.IntN(len(words))]
				}
				sid := fmt.Sprintf("mem-%d", s)
				req := transcript.AppendRequest{IdempotencyKey: fmt.Sprintf("m%d-s%d", m, s),
					Message: transcript.Message{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: text}}}}
				recs, err := e.appendRetrying(ctx, ns, sid, req)
				if err != nil {
					t.Errorf("append to %s: %v", sid, err)
					return
				}
				out <- remembered{sid: sid, seq: recs[0].Seq, text: text}
				acked.Add(1)
			}
		}
	}()
	for acked.Load() < memorySessions*memoryMessages/2 {
		time.Sleep(5 * time.Millisecond)
	}
	e.restartStore(t)
	<-appended
	e.restartStore(t)
	close(out)

	var want []remembered
	for r := range out {
		want = append(want, r)
	}
	deadline := time.Now().Add(settleTimeout)
	for {
		missing := e.unrecalled(ctx, ns, want)
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			m := missing[0]
			res, err := e.store.Recall(ctx, transcript.MemoryQuery{Namespace: ns, Agent: "ops", Text: m.text, Limit: 1, SessionIDs: []string{m.sid}})
			t.Fatalf("%d of %d acknowledged messages are not recalled by meaning after the store's restarts, e.g. %+v: %+v, %v",
				len(missing), len(want), m, res, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("%d messages appended across two store kills, all recalled by meaning", len(want))
}

// restartStore SIGKILLs the transcript-store and starts it again.
func (e *env) restartStore(t *testing.T) {
	t.Helper()
	e.cluster.Kill(devcluster.Store)
	if err := e.cluster.Restart(context.Background(), devcluster.Store); err != nil {
		t.Fatal(err)
	}
}

// appendRetrying appends req until the store answers: its idempotency key makes a retry of
// an append the killed store already made durable return the same record.
func (e *env) appendRetrying(ctx context.Context, ns, sid string, req transcript.AppendRequest) ([]transcript.Record, error) {
	var err error
	for range 600 {
		var recs []transcript.Record
		if recs, err = e.store.Append(ctx, ns, sid, req); err == nil {
			return recs, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, err
}

// unrecalled are the messages whose exact words do not recall them by meaning (the memory
// index's vectors, not the full-text index alone) as their session's best hit. The vectors
// are int8: a chunk's own words score about 0.99, not 1.
func (e *env) unrecalled(ctx context.Context, ns string, want []remembered) []remembered {
	var missing []remembered
	for _, r := range want {
		res, err := e.store.Recall(ctx, transcript.MemoryQuery{Namespace: ns, Agent: "ops", Text: r.text, Limit: 1, SessionIDs: []string{r.sid}})
		if err != nil || len(res.Hits) == 0 || res.Hits[0].Seq != r.seq || res.Hits[0].Similarity < 0.9 {
			missing = append(missing, r)
		}
	}
	return missing
}
