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

package mcptools

import (
	"context"
	"strings"
	"testing"
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
)

// A server that accepts and never answers, with a call timeout of ten minutes: a probe ends
// at its own timeout, says so, and leaves no redial back-off behind for the turns.
func TestProbeEndsAtItsOwnTimeout(t *testing.T) {
	hang := mcptest.Hang("127.0.0.1:0")
	t.Cleanup(hang.Close)
	p := newTestPool(t, Options{})
	agent := testAgent(1, sessionsv1alpha1.MCPServer{Name: "h", URL: hang.URL, TimeoutSeconds: seconds(600)})

	for i := 1; i <= 2; i++ {
		st := p.Probe(t.Context(), agent, 100*time.Millisecond).Status()
		if len(st) != 1 || st[0].Connected || st[0].Reason != ReasonUnreachable || st[0].Message != "no answer within the 100ms probe timeout" {
			t.Fatalf("probe %d: status %+v", i, st)
		}
		// Each probe dialled: the first one's timeout was not taken for a failed server.
		if got := hang.Accepted(); got < i {
			t.Fatalf("after probe %d the server was dialled %d times", i, got)
		}
	}
}

// A probe does not wait behind a turn that holds the server for its whole call timeout.
func TestProbeDoesNotWaitBehindATurn(t *testing.T) {
	hang := mcptest.Hang("127.0.0.1:0")
	t.Cleanup(hang.Close)
	p := newTestPool(t, Options{})
	agent := testAgent(1, sessionsv1alpha1.MCPServer{Name: "h", URL: hang.URL, TimeoutSeconds: seconds(600)})

	turn, stop := context.WithCancel(t.Context())
	defer stop()
	go p.Resolve(turn, agent)
	for hang.Accepted() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	st := p.Probe(t.Context(), agent, 100*time.Millisecond).Status()
	if len(st) != 1 || st[0].Connected || !strings.Contains(st[0].Message, "probe timeout") {
		t.Fatalf("probe behind a turn: status %+v", st)
	}
}
