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

package agentsession

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// TranscriptCreated is said only once the status that records the transcript is written: a
// refused write emits nothing, and the retried reconcile says it once.
func TestTranscriptCreatedOnlyAfterTheWriteLands(t *testing.T) {
	refuse := true
	funcs := &interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if refuse {
			return apierrors.NewConflict(schema.GroupResource{Resource: "agentsessions"}, obj.GetName(), errors.New("stale"))
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "uid-1"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:bob:main", AgentID: "bob"}}
	f := ownerflowtest.NewFixture(t, funcs, s)
	r := &AgentSessionReconciler{Client: f.C, Store: transcripttest.NewMemoryStore(), Clock: f.Clock, Recorder: f.Events}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}

	if _, err := r.Reconcile(context.Background(), req); !apierrors.IsConflict(err) {
		t.Fatalf("reconcile with the status write refused: err %v, want the conflict", err)
	}
	if len(f.Events.Reasons) != 0 {
		t.Errorf("events = %v, want none before the write lands", f.Events.Reasons)
	}

	refuse = false
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"TranscriptCreated"}, f.Events.Reasons); diff != "" {
		t.Errorf("events after the write (-want +got):\n%s", diff)
	}
	got := &sessionsv1alpha1.AgentSession{}
	if err := f.C.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.SessionID != "uid-1" {
		t.Errorf("sessionId %q, want the object's UID", got.Status.SessionID)
	}
}

// What the engine reports of a session's turns (counters, the retry condition) lands with the
// rest of the status in one write, and the engine is told which report it held.
func TestSessionReportInOneWrite(t *testing.T) {
	ctx := context.Background()
	writes := 0
	funcs := &interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		writes++
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "uid-1"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:bob:main", AgentID: "bob"}}
	f := ownerflowtest.NewFixture(t, funcs, s)
	store := transcripttest.NewMemoryStore()
	if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: "ns", SessionID: "uid-1", SessionKey: "agent:bob:main"}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, "ns", "uid-1",
		transcript.AppendRequest{IdempotencyKey: "t/0", Message: transcript.Message{Role: transcript.RoleUser,
			Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "ping"}}}},
		transcript.AppendRequest{IdempotencyKey: "t/1", Message: transcript.Message{Role: transcript.RoleAssistant,
			Content: []transcript.ContentBlock{{Type: transcript.BlockText, Text: "pong"}}, Usage: &transcript.Usage{Input: 10, Output: 2}}}); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(s)
	retrying := metav1.Condition{Type: sessionsv1alpha1.ConditionModelRetrying, Status: metav1.ConditionFalse, Reason: "Recovered", Message: "turn t: model call succeeded on attempt 2"}
	f.Runner.Reports = map[types.NamespacedName]turns.SessionReport{key: {Seq: 7, TurnEnded: true, AbortedLastRun: true, ContextTokens: 10, Retry: &retrying}}
	r := &AgentSessionReconciler{Client: f.C, Store: store, Runner: f.Runner, Clock: f.Clock, Recorder: f.Events}

	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Errorf("status writes = %d, want 1 (the transcript, the counters and the conditions together)", writes)
	}
	if diff := cmp.Diff([]uint64{7}, f.Runner.Written); diff != "" {
		t.Errorf("reports acknowledged (-want +got):\n%s", diff)
	}
	got := &sessionsv1alpha1.AgentSession{}
	if err := f.C.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	st := got.Status
	if st.SessionID != "uid-1" || st.MessageCount != 2 || st.InputTokens != 10 || st.OutputTokens != 2 || st.LastMessagePreview != "pong" ||
		st.ContextTokens != 10 || !st.SystemSent || !st.AbortedLastRun || st.Usage == nil || st.Usage.Turns != 1 {
		t.Errorf("status = %+v, want the transcript's counters and the report's marks", st)
	}
	for _, c := range []string{sessionsv1alpha1.ConditionReady, sessionsv1alpha1.ConditionModelRetrying} {
		if meta.FindStatusCondition(st.Conditions, c) == nil {
			t.Errorf("condition %s missing from %+v", c, st.Conditions)
		}
	}
}

// archiveCounter counts the store's Archive calls.
type archiveCounter struct {
	transcript.Store
	archives int
}

func (a *archiveCounter) Archive(ctx context.Context, namespace, sessionID string) error {
	a.archives++
	return a.Store.Archive(ctx, namespace, sessionID)
}

func TestArchivedSessionArchivesItsTranscriptOnce(t *testing.T) {
	ctx := context.Background()
	s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "uid-1"},
		Spec:   sessionsv1alpha1.AgentSessionSpec{Key: "agent:bob:main", AgentID: "bob"},
		Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "uid-1", Phase: sessionsv1alpha1.SessionArchived}}
	f := ownerflowtest.NewFixture(t, nil, s)
	store := &archiveCounter{Store: transcripttest.NewMemoryStore()}
	if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: "ns", SessionID: "uid-1", SessionKey: "agent:bob:main"}); err != nil {
		t.Fatal(err)
	}
	r := &AgentSessionReconciler{Client: f.C, Store: store, Runner: f.Runner, Clock: f.Clock, Recorder: f.Events}
	key := client.ObjectKeyFromObject(s)

	for i := range 3 {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatalf("reconcile %d: %v", i+1, err)
		}
	}
	if store.archives != 1 {
		t.Errorf("store archives = %d over three reconciles, want 1 (none once the Archived condition is written)", store.archives)
	}
	if _, err := store.Read(ctx, "ns", "uid-1", transcript.ReadOptions{}); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("live transcript read after the archive: err %v, want not found", err)
	}
	got := &sessionsv1alpha1.AgentSession{}
	if err := f.C.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, sessionsv1alpha1.ConditionArchived) {
		t.Errorf("conditions = %+v, want Archived true", got.Status.Conditions)
	}
}
