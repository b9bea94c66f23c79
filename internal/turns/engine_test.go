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
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

const (
	keyA = "agent:main:main"
	keyB = "agent:main:discord:group:42"
	sidA = "11111111-1111-4111-8111-111111111111"
	sidB = "22222222-2222-4222-8222-222222222222"
)

func mainFixture(t *testing.T, opts ...fixtureOption) *fixture {
	agent := scriptedAgent("main",
		rule("^ping", "pong"),
		slowRule("^slow", "done", 10*time.Second),
	)
	return newFixture(t, []client.Object{agent, session(keyA, "main", sidA), session(keyB, "main", sidB)}, opts...)
}

func TestSubmitValidation(t *testing.T) {
	cases := map[string]struct {
		edit    func(*TurnRequest)
		wantErr string
	}{
		"complete":   {edit: func(*TurnRequest) {}},
		"no id":      {edit: func(r *TurnRequest) { r.ID = "" }, wantErr: "without ID"},
		"no session": {edit: func(r *TurnRequest) { r.SessionKey = "" }, wantErr: "names no session"},
		"no owner":   {edit: func(r *TurnRequest) { r.Owner = Owner{} }, wantErr: "has no owner"},
		// The step runner resolves them; the engine looks nothing up.
		"no session object": {edit: func(r *TurnRequest) { r.Session = nil }, wantErr: "without its session and Agent"},
		"no agent object":   {edit: func(r *TurnRequest) { r.Agent = nil }, wantErr: "without its session and Agent"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := mainFixture(t)
			req := turnReq("t1", keyA, "ping")
			f.resolve(&req)
			tc.edit(&req)
			err := f.engine.Submit(context.Background(), req)
			if got := errString(err); !strings.Contains(got, tc.wantErr) || (tc.wantErr == "") != (err == nil) {
				t.Fatalf("Submit error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestTurnAppendsAndCounts(t *testing.T) {
	f := mainFixture(t)
	req := turnReq("u1/round-1", keyA, "ping")
	req.Input.Provenance = &transcript.Provenance{Kind: transcript.ProvenanceInterSession, SourceSessionKey: keyB, SourceTool: "sessions_send"}
	f.submit(req)
	res := f.await(req.ID)

	// The reply is record 2 of the transcript, after its input: where status finds it whole.
	want := TurnResult{Text: "pong", ReplySeq: 2, InputTokens: res.InputTokens, OutputTokens: 1, StopReason: "stop", Started: epoch, Finished: epoch}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if res.InputTokens == 0 {
		t.Errorf("InputTokens = 0, want the estimate of system prompt + input")
	}
	wantRecs := []rec{
		{Key: "u1/round-1/0", Role: "user", Text: "ping"},
		{Key: "u1/round-1/1", Role: "assistant", Text: "pong"},
	}
	if diff := cmp.Diff(wantRecs, f.records(sidA)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	first, _ := f.store.Read(context.Background(), ns, sidA, transcript.ReadOptions{Limit: 2, IncludeTools: true})
	if diff := cmp.Diff(req.Input.Provenance, first.Messages[0].Message.Provenance); diff != "" {
		t.Errorf("input provenance (-want +got):\n%s", diff)
	}

	// The engine reports the turn to the session's controller; the status is its to write.
	wantReport := SessionReport{TurnEnded: true, ContextTokens: res.InputTokens}
	if diff := cmp.Diff(wantReport, f.report(), cmpopts.IgnoreFields(SessionReport{}, "Seq")); diff != "" {
		t.Errorf("session report (-want +got):\n%s", diff)
	}
	if got := f.session(keyA).Status; got.MessageCount != 0 || got.ContextTokens != 0 {
		t.Errorf("session status = %+v, want untouched by the engine", got)
	}
}

// A lane runs its turns in order, one at a time: the fast turn submitted second waits for
// the slow one, while another session's lane is free to run.
func TestLaneFIFO(t *testing.T) {
	f := mainFixture(t)
	f.submit(turnReq("a", keyA, "slow one"))
	f.submit(turnReq("b", keyA, "ping"))
	f.submit(turnReq("other", keyB, "ping"))
	if res := f.await("other"); res.Text != "pong" {
		t.Fatalf("other session's turn = %+v", res)
	}
	f.waitTimers(2) // turn a is in its scripted delay (and under its turn timeout)
	if _, ok := f.engine.Result(ownerOf("b"), "b"); ok {
		t.Fatal("turn b finished while turn a, ahead of it in the lane, was still running")
	}
	f.clock.Step(10 * time.Second)
	if res := f.await("b"); res.Text != "pong" {
		t.Fatalf("turn b = %+v", res)
	}
	if res, _ := f.engine.Result(ownerOf("a"), "a"); res.Text != "done" {
		t.Fatalf("turn a = %+v", res)
	}
	want := []rec{
		{Key: "a/0", Role: "user", Text: "slow one"},
		{Key: "a/1", Role: "assistant", Text: "done"},
		{Key: "b/0", Role: "user", Text: "ping"},
		{Key: "b/1", Role: "assistant", Text: "pong"},
	}
	if diff := cmp.Diff(want, f.records(sidA)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

// A turn in another session waits for the running one when the global bound or the
// namespace bound is reached, and runs when it ends.
func TestConcurrencyBounds(t *testing.T) {
	cases := map[string][]fixtureOption{
		"global bound 1":         {maxConcurrent(1)},
		"namespace bound 1 of 4": {maxConcurrent(4), func(o *Options) { o.MaxTurnsPerNamespace = 1 }},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			f := mainFixture(t, opts...)
			f.submit(turnReq("a", keyA, "slow"))
			f.waitTimers(2)
			f.submit(turnReq("b", keyB, "ping"))
			if _, ok := f.engine.Result(ownerOf("b"), "b"); ok {
				t.Fatal("turn b ran beyond the bound")
			}
			f.clock.Step(10 * time.Second)
			if res := f.await("b"); res.Text != "pong" {
				t.Fatalf("turn b = %+v", res)
			}
			if _, most := f.calls.snapshot(); most != 1 {
				t.Errorf("model calls at once = %d, want 1", most)
			}
		})
	}
}

// The same turn id submitted again while queued, running or finished runs once; after
// its owner releases it, it runs again but appends nothing twice and has the same outcome.
func TestSameTurnIDRunsOnce(t *testing.T) {
	f := mainFixture(t)
	f.submit(turnReq("a", keyA, "slow"))
	f.waitTimers(2)
	f.submit(turnReq("a", keyA, "slow"))
	f.clock.Step(10 * time.Second)
	first := f.await("a")
	f.submit(turnReq("a", keyA, "slow")) // finished, not forgotten: a no-op
	if calls, _ := f.calls.snapshot(); calls != 1 {
		t.Fatalf("model calls = %d, want 1", calls)
	}
	f.engine.Abort(ownerOf("a"))
	if _, ok := f.engine.Result(ownerOf("a"), "a"); ok {
		t.Fatal("Result after Abort")
	}
	f.submit(turnReq("a", keyA, "slow"))
	again := f.await("a")
	if diff := cmp.Diff(first, again, cmpopts.IgnoreFields(TurnResult{}, "Started", "Finished")); diff != "" {
		t.Errorf("outcome of the repeated turn (-first +again):\n%s", diff)
	}
	if calls, _ := f.calls.snapshot(); calls != 1 {
		t.Errorf("model calls = %d, want 1: the repeated turn reuses the stored reply", calls)
	}
	want := []rec{{Key: "a/0", Role: "user", Text: "slow"}, {Key: "a/1", Role: "assistant", Text: "done"}}
	if diff := cmp.Diff(want, f.records(sidA)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
}

// A manager that crashed after the model answered but before the owner recorded the
// outcome: a new engine on the same files repeats the turn. The stored answer wins (the
// script now says something else), the model is not called again, nothing is appended twice.
func TestRepeatAfterCrash(t *testing.T) {
	f := mainFixture(t)
	stored := transcript.Message{Role: transcript.RoleAssistant, StopReason: "stop",
		Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "the first answer"}},
		Usage:   &transcript.Usage{Input: 7, Output: 4, TotalTokens: 11}}
	req := turnReq("c", keyA, "ping")
	if _, err := f.store.Append(context.Background(), ns, sidA,
		transcript.AppendRequest{IdempotencyKey: "c/0", Message: req.Input},
		transcript.AppendRequest{IdempotencyKey: "c/1", Message: stored}); err != nil {
		t.Fatal(err)
	}
	f.engine.Stop()
	if err := f.store.Close(); err != nil {
		t.Fatal(err)
	}
	f.openStore()
	f.engine = f.newEngine()

	f.submit(req)
	res := f.await("c")
	want := TurnResult{Text: "the first answer", ReplySeq: 2, InputTokens: 7, OutputTokens: 4, StopReason: "stop", Started: epoch, Finished: epoch}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if calls, _ := f.calls.snapshot(); calls != 0 {
		t.Errorf("model calls = %d, want 0", calls)
	}
	wantRecs := []rec{{Key: "c/0", Role: "user", Text: "ping"}, {Key: "c/1", Role: "assistant", Text: "the first answer"}}
	if diff := cmp.Diff(wantRecs, f.records(sidA)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if st, _ := f.store.Stats(context.Background(), ns, sidA); st.InputTokens != 7 || st.OutputTokens != 4 {
		t.Errorf("transcript tokens = %d/%d, want 7/4 (counted once)", st.InputTokens, st.OutputTokens)
	}
}

// A turn past its deadline is cut promptly (the model is still "thinking"), its input is
// kept, and the session is marked abortedLastRun.
func TestDeadlineAborts(t *testing.T) {
	f := mainFixture(t)
	req := turnReq("d", keyA, "slow")
	req.Deadline = epoch.Add(5 * time.Second)
	f.submit(req)
	f.waitTimers(3) // the request deadline, the turn timeout and the scripted delay
	f.clock.Step(5 * time.Second)
	res := f.await("d")
	if !res.Aborted || !errors.Is(res.Err, ErrDeadline) {
		t.Fatalf("result = %+v, want aborted by the deadline", res)
	}
	if diff := cmp.Diff([]rec{{Key: "d/0", Role: "user", Text: "slow"}}, f.records(sidA)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if !f.report().AbortedLastRun {
		t.Error("session not reported abortedLastRun")
	}

	// The next turn that ends normally clears the mark.
	f.submit(turnReq("e", keyA, "ping"))
	f.await("e")
	if f.report().AbortedLastRun {
		t.Error("abortedLastRun still reported after a complete turn")
	}
}

// A turn whose deadline passes while it waits in its lane never starts.
func TestDeadlineWhileQueued(t *testing.T) {
	f := mainFixture(t)
	f.submit(turnReq("a", keyA, "slow"))
	f.waitTimers(2)
	req := turnReq("b", keyA, "ping")
	req.Deadline = epoch.Add(time.Second)
	f.submit(req)
	f.clock.Step(time.Second)
	res := f.await("b")
	if !res.Aborted || !errors.Is(res.Err, ErrDeadline) {
		t.Fatalf("result = %+v, want aborted by the deadline", res)
	}
	if calls, _ := f.calls.snapshot(); calls != 1 {
		t.Errorf("model calls = %d, want 1 (turn a only)", calls)
	}
}

func TestAbort(t *testing.T) {
	f := mainFixture(t)
	f.submit(turnReq("a", keyA, "slow"))
	f.waitTimers(2)
	if n := f.engine.Abort(ownerOf("a")); n != 1 {
		t.Fatalf("Abort of an owner with a running turn = %d, want 1", n)
	}
	f.awaitWake("a")
	if _, ok := f.engine.Result(ownerOf("a"), "a"); ok {
		t.Error("an aborted owner's turn left an outcome")
	}
	if n := f.engine.Abort(ownerOf("a")); n != 0 {
		t.Errorf("Abort of a released owner = %d, want 0", n)
	}
	if !f.report().AbortedLastRun {
		t.Error("session not reported abortedLastRun")
	}
}

// Abort of an owner cancels its running turn's model call, drops its queued turn without
// running it, and leaves the engine holding nothing for it: memory follows live owners.
func TestAbortOwnerReleasesEverything(t *testing.T) {
	f := mainFixture(t)
	running, queued := turnReq("a", keyA, "slow"), turnReq("b", keyA, "ping")
	queued.Owner = running.Owner
	f.submit(running)
	f.submit(queued)
	f.submit(turnReq("done", keyB, "ping"))
	f.await("done")
	f.waitTimers(2) // a is in its model call (and under its turn timeout)
	if got := f.engine.Owners(); got != 2 {
		t.Fatalf("owners held = %d, want 2", got)
	}
	if n := f.engine.Abort(running.Owner); n != 2 {
		t.Fatalf("Abort = %d, want 2 (one running, one queued)", n)
	}
	f.engine.Abort(ownerOf("done"))
	f.awaitWake("a")
	if calls, _ := f.calls.snapshot(); calls != 2 {
		t.Errorf("model calls = %d, want 2 (a and done; b never ran)", calls)
	}
	f.engine.Stop() // every lane drained
	if got := f.engine.Owners(); got != 0 {
		t.Errorf("owners held after all were released = %d, want 0", got)
	}
	f.engine.mu.Lock()
	jobs := len(f.engine.jobs)
	f.engine.mu.Unlock()
	if jobs != 0 {
		t.Errorf("jobs held = %d, want 0", jobs)
	}
}

// A turn's system context (its role in a send or run) is a system record of that turn, once
// even when the turn runs again, and never replayed to the model from history.
func TestSystemContextIsRecordedOnce(t *testing.T) {
	f := mainFixture(t)
	req := turnReq("u2/round-1", keyA, "ping")
	req.SystemContext = "Agent-to-agent message: from agent:b:main."
	f.submit(req)
	f.await(req.ID)
	f.engine.Abort(ownerOf(req.ID)) // forgets the result: the same turn runs again, as after a restart
	f.submit(req)
	f.await(req.ID)

	want := []rec{
		{Key: "u2/round-1/system", Role: "system", Text: "Agent-to-agent message: from agent:b:main."},
		{Key: "u2/round-1/0", Role: "user", Text: "ping"},
		{Key: "u2/round-1/1", Role: "assistant", Text: "pong"},
	}
	if diff := cmp.Diff(want, f.records(sidA)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	next := turnReq("u3/round-1", keyA, "ping")
	f.submit(next)
	f.await(next.ID)
	for _, m := range f.calls.lastRequest().Messages {
		if strings.Contains(m.Text, "Agent-to-agent message") {
			t.Errorf("a later turn got an earlier turn's system context from history: %+v", m)
		}
	}
}
