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

package turns

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// A forked turn's session starts with the source's recent conversation, text only, before
// its input; the model sees it; a repeat of the turn writes nothing twice, even after the
// source moved on.
func TestForkedTurnStartsFromTheSource(t *testing.T) {
	agent := scriptedAgent("main", rule("^what did we say", "we said: {{input}}"))
	f := newFixture(t, []client.Object{agent, session(keyA, "main", sidA), session(keyB, "main", sidB)})
	call := transcript.ContentBlock{Type: transcript.BlockToolCall, ID: "c1", Name: "agents_list", Arguments: json.RawMessage(`{}`)}
	for _, m := range []transcript.Message{
		{Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "the llamas number 42"}}},
		{Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "noted"}, call}},
		{Role: transcript.RoleToolResult, ToolName: "agents_list", Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "{}"}}},
		{Role: transcript.RoleAssistant, Content: []transcript.ContentBlock{call}}, // nothing left once the call goes
	} {
		if _, err := f.store.Append(context.Background(), ns, sidA, transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	req := turnReq("fork1", keyB, "what did we say")
	req.ForkFrom = &ForkSource{SessionKey: keyA, SessionID: sidA}
	f.submit(req)
	if res := f.await("fork1"); res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []rec{
		{Key: "fork1/fork/0", Role: "user", Text: "the llamas number 42"},
		{Key: "fork1/fork/1", Role: "assistant", Text: "noted"},
		{Key: "fork1/0", Role: "user", Text: "what did we say"},
		{Key: "fork1/1", Role: "assistant", Text: "we said: what did we say"},
	}
	if diff := cmp.Diff(want, f.records(sidB)); diff != "" {
		t.Errorf("child transcript (-want +got):\n%s", diff)
	}

	// The source moves on; the same turn again (a repeat after a crash) adds nothing.
	if _, err := f.store.Append(context.Background(), ns, sidA, transcript.AppendRequest{Message: transcript.Message{
		Role: transcript.RoleUser, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "later"}}}}); err != nil {
		t.Fatal(err)
	}
	f2 := &fixture{t: t, clock: f.clock, client: f.client, store: f.store, dir: f.dir, calls: f.calls}
	f2.engine = f2.newEngine()
	f2.submit(req)
	if res := f2.await("fork1"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if diff := cmp.Diff(want, f.records(sidB)); diff != "" {
		t.Errorf("after the repeat (-want +got):\n%s", diff)
	}
}
