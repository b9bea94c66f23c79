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

package window

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	clocktesting "k8s.io/utils/clock/testing"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// text is a transcript message of role with text.
func text(role, s string) transcript.Message {
	return transcript.Message{Role: role, Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: s}}}
}

// shown is role:text of each message the model sees.
func shown(msgs []provider.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+m.Text)
	}
	return out
}

// newSource is a Source over a memory store holding sessions s (empty) and src, a fake clock,
// and the store.
func newSource(t *testing.T) (*Source, *readLog, *clocktesting.FakeClock) {
	t.Helper()
	st := newHistoryStore(t, "s", "src")
	fc := clocktesting.NewFakeClock(time.Unix(0, 0))
	return NewSource(st, fc, DefaultHistoryCacheBytes), st, fc
}

func agentWith(contextTokens int64) *sessionsv1alpha1.Agent {
	a := &sessionsv1alpha1.Agent{}
	a.Spec.Model.ContextTokens = ptr.To(contextTokens)
	return a
}

// Build queues a forked turn's records before its system context and input, and the model
// sees the session's history, the forked conversation, then the input.
func TestBuildQueuesTheForkThenTheInput(t *testing.T) {
	src, st, _ := newSource(t)
	ctx := context.Background()
	for _, m := range []transcript.Message{text(transcript.RoleUser, "earlier"), text(transcript.RoleAssistant, "yes")} {
		if _, err := st.Append(ctx, "ns", "s", transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Append(ctx, "ns", "src", transcript.AppendRequest{Message: text(transcript.RoleUser, "llamas: 42")}); err != nil {
		t.Fatal(err)
	}
	w, err := src.Build(ctx, Request{Namespace: "ns", SessionID: "s", Turn: "t", Agent: agentWith(100000),
		Input: text(transcript.RoleUser, "how many?"), SystemContext: "you were spawned",
		ForkFrom: &ForkSource{SessionKey: "agent:a:src", SessionID: "src"}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, q := range w.Queue {
		keys = append(keys, q.IdempotencyKey)
	}
	if d := cmp.Diff([]string{"t/fork/0", "t/system", "t/0"}, keys); d != "" {
		t.Errorf("queued (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"user:earlier", "assistant:yes", "user:llamas: 42", "user:how many?"}, shown(w.Messages())); d != "" {
		t.Errorf("model sees (-want +got):\n%s", d)
	}
	if len(w.Done) != 0 || w.Summary() != "" {
		t.Errorf("a first run: done %v, summary %q", w.Done, w.Summary())
	}
}

// sessionWindow is the window of turn "t" in session s after n user messages of size bytes,
// its Agent's context window contextTokens, and the source's clock.
func sessionWindow(t *testing.T, n, size int, contextTokens int64) (*Window, *clocktesting.FakeClock) {
	t.Helper()
	src, st, fc := newSource(t)
	for i := range n {
		m := text(transcript.RoleUser, strings.Repeat(string(rune('a'+i%26)), size))
		if _, err := st.Append(context.Background(), "ns", "s", transcript.AppendRequest{Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := src.Build(context.Background(), Request{Namespace: "ns", SessionID: "s", Turn: "t", Agent: agentWith(contextTokens),
		Model: "m", Input: text(transcript.RoleUser, "go on")})
	if err != nil {
		t.Fatal(err)
	}
	return w, fc
}

// Compact asks the model only through the Summarise it is given, once, appends the record
// under the turn's key and fits the view anew: the summary, then the kept messages.
func TestCompactAsksThroughSummarise(t *testing.T) {
	w, _ := sessionWindow(t, 30, 200, 1500) // 1,500 tokens in a window of 1,500: past the trigger (0.8)
	var asked []provider.Request
	summarise := func(_ context.Context, req provider.Request) (transcript.Message, error) {
		asked = append(asked, req)
		return text(transcript.RoleAssistant, "the summary"), nil
	}
	c, err := w.Compact(context.Background(), summarise)
	if err != nil || c.Record == nil || c.Earlier {
		t.Fatalf("Compact = %+v, %v; want a record made now", c, err)
	}
	if len(asked) != 1 || asked[0].Model != "m" || !strings.HasPrefix(asked[0].Messages[0].Text, CompactionStepPrefix) {
		t.Fatalf("summarise asked %d times: %+v", len(asked), asked)
	}
	if c.Record.IdempotencyKey != "t/compaction" || c.Record.Message.Role != transcript.RoleCompaction {
		t.Errorf("record = %+v", c.Record)
	}
	if got := w.Summary(); !strings.HasSuffix(got, "the summary") {
		t.Errorf("summary after the step = %q", got)
	}
	msgs := shown(w.Messages())
	if len(msgs) != DefaultKeepRecentMessages+1 || msgs[len(msgs)-1] != "user:go on" {
		t.Errorf("model sees %d messages after the step, want the %d kept and the input", len(msgs), DefaultKeepRecentMessages)
	}
}

// A window under its trigger does not compact: the model is not asked.
func TestCompactUnderTheTriggerAsksNothing(t *testing.T) {
	w, _ := sessionWindow(t, 3, 10, 100000)
	c, err := w.Compact(context.Background(), func(context.Context, provider.Request) (transcript.Message, error) {
		t.Error("summarise called under the trigger")
		return transcript.Message{}, nil
	})
	if err != nil || c.Record != nil {
		t.Errorf("Compact = %+v, %v; want nothing", c, err)
	}
}

// A step that outlives the Agent's compaction timeout on the source's clock ends with
// ErrCompactionTimeout and leaves the view as it was.
func TestCompactTimesOutOnTheClock(t *testing.T) {
	w, fc := sessionWindow(t, 30, 200, 1500)
	before := shown(w.Messages())
	c, err := w.Compact(context.Background(), func(ctx context.Context, _ provider.Request) (transcript.Message, error) {
		fc.Step(DefaultCompactionTimeout) // the timer's func runs in Step
		if ctx.Err() == nil {
			return transcript.Message{}, errors.New("the step's context outlived its timeout")
		}
		return transcript.Message{}, context.Cause(ctx)
	})
	if !errors.Is(err, ErrCompactionTimeout) || c.Record != nil {
		t.Fatalf("Compact = %+v, %v; want ErrCompactionTimeout", c, err)
	}
	if d := cmp.Diff(before, shown(w.Messages())); d != "" {
		t.Errorf("view changed by a failed step (-before +after):\n%s", d)
	}
}
