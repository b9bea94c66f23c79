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

package cli

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

func TestPrintCard(t *testing.T) {
	card := &sessiontools.StatusCard{SessionKey: "agent:main:main", SessionID: "sid", AgentID: "main", Phase: "Active",
		Model: "big", ModelOverride: "big", ThinkingLevel: "low", MessageCount: 7, StateVersion: 5,
		Usage:        sessionsv1alpha1.Usage{InputTokens: 100, OutputTokens: 10, Turns: 2, Cost: "0.0005", Currency: "USD"},
		RunsInFlight: []sessiontools.RunInFlight{{Kind: "run", Name: "spawn-1", Phase: "Running", ChildSessionKey: "agent:main:subagent:x"}},
		Changes:      []sessiontools.Change{{Version: 5, Kind: sessiontools.ChangeChildOutcome, Text: "Status: ok"}}}
	var out bytes.Buffer
	if err := printCard(&out, card, true); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"Session:           agent:main:main\n" +
		"Session ID:        sid\n" +
		"Agent:             main\n" +
		"Label:             -\n" +
		"Phase:             Active\n" +
		"Model:             big (session override)\n" +
		"Thinking:          low\n" +
		"Usage:             2 turns, 100 in, 10 out, 0 cached\n" +
		"Cost:              0.0005 USD\n" +
		"Messages:          7\n" +
		"Active run:        -\n" +
		"State version:     5\n" +
		"Runs in flight:    1\n" +
		"  run spawn-1      Running agent:main:subagent:x\n" +
		"  5 child_outcome  Status: ok\n"
	if d := cmp.Diff(want, out.String()); d != "" {
		t.Errorf("card (-want +got):\n%s", d)
	}
}
