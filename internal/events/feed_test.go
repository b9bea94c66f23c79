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

package events

import (
	"encoding/json"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

func TestACommitPublishesEachRecordThenTheCounters(t *testing.T) {
	h := NewHub(0, "e")
	s := h.Subscribe("")
	defer s.Close()
	hdr := transcript.SessionHeader{Namespace: "ns", SessionID: "id1", SessionKey: "agent:a:main"}
	h.PublishCommit(hdr, []int64{7, 8}, [][]byte{[]byte(`{"seq":7}`), []byte(`{"seq":8}`)},
		transcript.Stats{MessageCount: 8, LastPreview: "hello", Path: "/data/secret"})
	var got []Event
	for range 3 {
		got = append(got, <-s.C)
	}
	for i, kind := range []string{KindSessionMessage, KindSessionMessage, KindSessionsChanged} {
		if got[i].Kind != kind || got[i].Name != "agent-a-main" && got[i].Name == "" {
			t.Fatalf("event %d: %v, want %s with the session's name", i, got[i], kind)
		}
	}
	var m SessionMessage
	if err := json.Unmarshal(got[1].Data, &m); err != nil || m.Seq != 8 || string(m.Record) != `{"seq":8}` {
		t.Fatalf("message payload %s (%v)", got[1].Data, err)
	}
	var c SessionChange
	if err := json.Unmarshal(got[2].Data, &c); err != nil || c.Phase != PhaseMessage || c.Stats == nil ||
		c.Stats.MessageCount != 8 || c.Stats.LastPreview != "hello" || c.Stats.Path != "" {
		t.Fatalf("changed payload %s (%v)", got[2].Data, err)
	}
}
