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

package sessiontools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
)

// BenchmarkListArchivedRetired is sessions_list archived, 50 rows of a namespace's 50,000
// retired sessions, as a person asks it, with and without a search filter; p50-ms is the
// median of the rounds.
func BenchmarkListArchivedRetired(b *testing.B) {
	const n = 50000
	ctx := context.Background()
	dir := b.TempDir()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "retired-"); err == nil {
			dir = d
			b.Cleanup(func() { _ = os.RemoveAll(d) })
		}
	}
	recs, err := store.OpenRetiredStore(dir, store.WithRetiredBounds(n, n))
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", i, i%0x10000, i%0x1000, (i/7)%0x1000, i*7919)
		at := t0.Add(time.Duration(i) * time.Second)
		if err := recs.Retire(ctx, transcript.RetiredSession{Namespace: ns, Name: fmt.Sprintf("agent-main-subagent-%08x", i), SessionID: id,
			Key: "agent:main:subagent:" + id, AgentID: "main", Kind: "subagent", Channel: "internal", ChatType: "direct",
			DisplayName: fmt.Sprintf("Sub-agent %d", i), Label: fmt.Sprintf("research task %d", i), SpawnedBy: "agent:main:main",
			ParentSessionKey: "agent:main:main", MessageCount: 12, TotalTokens: 5120, TranscriptPath: ns + "/" + id + ".jsonl.deleted.1772323200",
			CreatedAt: at.Add(-2 * time.Hour), UpdatedAt: at.Add(-time.Hour), ArchivedAt: at, RetiredAt: at.Add(7 * 24 * time.Hour), Reason: "age"}); err != nil {
			b.Fatal(err)
		}
	}
	cl := newFakeClient()
	c := &Call{Env: &Env{Client: cl, Reader: cl, Retired: recordsOnly{recs}}, Namespace: ns}
	for name, tc := range map[string]struct {
		args string
		rows int
	}{
		"all":    {`{"archived":true}`, 50},
		"search": {`{"archived":true,"search":"TASK 4242"}`, 11},
	} {
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				out, err := listTool().Run(ctx, c, json.RawMessage(tc.args))
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if got := len(out.(map[string]any)["sessions"].([]sessionrows.SessionRow)); got != tc.rows {
					b.Fatalf("%d rows, want %d", got, tc.rows)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		})
	}
}
