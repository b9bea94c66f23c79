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
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// session is a session named name in ns "ns" with uid, its status and annotations as given.
func session(name, uid string, st sessionsv1alpha1.AgentSessionStatus, annotations map[string]string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid), Annotations: annotations},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:bob:" + name, AgentID: "bob"}, Status: st}
}

var archivedStatus = sessionsv1alpha1.AgentSessionStatus{SessionID: "uid-a", Phase: sessionsv1alpha1.SessionArchived,
	Conditions: []metav1.Condition{{Type: sessionsv1alpha1.ConditionArchived, Status: metav1.ConditionTrue, Reason: "Archived"}}}

// What the delete event of a session queues: its transcript and the one an adoption or a
// reset in flight made live; nothing for an archived session unless the informer missed the
// delete (a tombstone's state may be older than the last).
func TestGoneOf(t *testing.T) {
	active := sessionsv1alpha1.AgentSessionStatus{SessionID: "uid-a", Phase: sessionsv1alpha1.SessionActive}
	cases := map[string]struct {
		s       *sessionsv1alpha1.AgentSession
		unknown bool
		want    *goneSession
	}{
		"live": {s: session("a", "uid-a", active, nil),
			want: &goneSession{SessionID: "uid-a"}},
		"before its first status write: the UID": {s: session("a", "uid-a", sessionsv1alpha1.AgentSessionStatus{}, nil),
			want: &goneSession{SessionID: "uid-a"}},
		"archived: nothing left": {s: session("a", "uid-a", archivedStatus, nil)},
		"archived, from a tombstone": {s: session("a", "uid-a", archivedStatus, nil), unknown: true,
			want: &goneSession{SessionID: "uid-a"}},
		"adopting a retired transcript": {s: session("a", "uid-a", sessionsv1alpha1.AgentSessionStatus{},
			map[string]string{sessionsv1alpha1.RestoreFromAnnotation: "old-sid"}),
			want: &goneSession{SessionID: "uid-a", Pending: "old-sid"}},
		"resetting": {s: session("a", "uid-a", active, map[string]string{sessionsv1alpha1.ResetAnnotation: "uid-a"}),
			want: &goneSession{SessionID: "uid-a", Pending: nextSessionID("uid-a", "uid-a")}},
		"a reset done": {s: session("a", "uid-a", sessionsv1alpha1.AgentSessionStatus{SessionID: "new-sid", Phase: sessionsv1alpha1.SessionActive},
			map[string]string{sessionsv1alpha1.ResetAnnotation: "uid-a"}),
			want: &goneSession{SessionID: "new-sid"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := goneOf(tc.s, tc.unknown)
			if tc.want == nil {
				if ok {
					t.Errorf("goneOf = %+v, want nothing to clean up", got)
				}
				return
			}
			want := *tc.want
			want.NamespacedName, want.UID = client.ObjectKeyFromObject(tc.s), tc.s.UID
			if diff := cmp.Diff(want, got); !ok || diff != "" {
				t.Errorf("goneOf ok=%v (-want +got):\n%s", ok, diff)
			}
		})
	}
}

// The orphan sweep's judgement: a live transcript is an orphan unless a session holds it
// by its UID, its sessionId, or an adoption or a reset in flight.
func TestUnheld(t *testing.T) {
	sessions := []sessionsv1alpha1.AgentSession{
		*session("live", "uid-live", sessionsv1alpha1.AgentSessionStatus{SessionID: "uid-live"}, nil),
		*session("fresh", "uid-fresh", sessionsv1alpha1.AgentSessionStatus{}, nil),
		*session("adopted", "uid-adopted", sessionsv1alpha1.AgentSessionStatus{SessionID: "sid-retired", Phase: sessionsv1alpha1.SessionActive}, nil),
		*session("adopting", "uid-adopting", sessionsv1alpha1.AgentSessionStatus{}, map[string]string{sessionsv1alpha1.RestoreFromAnnotation: "sid-adopting"}),
		*session("resetting", "uid-resetting", sessionsv1alpha1.AgentSessionStatus{SessionID: "uid-resetting", Phase: sessionsv1alpha1.SessionActive},
			map[string]string{sessionsv1alpha1.ResetAnnotation: "uid-resetting"}),
	}
	live := []string{"uid-live", "uid-fresh", "sid-retired", "sid-adopting", nextSessionID("uid-resetting", "uid-resetting"), "uid-resetting", "uid-gone"}
	if diff := cmp.Diff([]string{"uid-gone"}, unheld(live, sessions)); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
}

// The cleanup of a deleted session archives its transcript and removes its workspace,
// again harmlessly; a session recreated under the name that adopted the transcript keeps it.
func TestCleanupArchivesAndRemovesWorkspace(t *testing.T) {
	ctx := context.Background()
	store := transcripttest.NewMemoryStore()
	root := t.TempDir()
	for _, sid := range []string{"uid-gone", "sid-adopted"} {
		if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: "ns", SessionID: sid, SessionKey: "agent:bob:" + sid}); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(turns.WorkspaceDir(root, "ns", sid), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	again := session("b", "uid-new", sessionsv1alpha1.AgentSessionStatus{SessionID: "sid-adopted", Phase: sessionsv1alpha1.SessionActive},
		map[string]string{sessionsv1alpha1.RestoreFromAnnotation: "sid-adopted"})
	f := ownerflowtest.NewFixture(t, nil, again)
	c := &Cleanup{Client: f.C, Store: store, WorkspaceRoot: root}

	gone := goneSession{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}, UID: "uid-gone", SessionID: "uid-gone"}
	for range 2 {
		if _, err := c.Reconcile(ctx, gone); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Stats(ctx, "ns", "uid-gone"); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("the gone session's transcript: %v, want archived (not found live)", err)
	}
	if _, err := os.Stat(turns.WorkspaceDir(root, "ns", "uid-gone")); !os.IsNotExist(err) {
		t.Errorf("the gone session's workspace: %v, want removed", err)
	}

	// "b" was deleted while adopting sid-adopted, and made again, which adopted it.
	adopting := goneSession{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "b"}, UID: "uid-old", SessionID: "uid-old", Pending: "sid-adopted"}
	if _, err := c.Reconcile(ctx, adopting); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Stats(ctx, "ns", "sid-adopted"); err != nil {
		t.Errorf("the transcript the new session adopted: %v, want live", err)
	}
	if _, err := os.Stat(filepath.Join(turns.WorkspaceDir(root, "ns", "sid-adopted"))); err != nil {
		t.Errorf("the new session's workspace: %v, want kept", err)
	}
}

// A session an older manager made carries the legacy finalizer: a reconcile takes it off
// (one patch); one deleted while it carried it is archived and let go, not left stuck.
func TestLegacyFinalizer(t *testing.T) {
	ctx := context.Background()
	store := transcripttest.NewMemoryStore()
	live := session("live", "uid-live", sessionsv1alpha1.AgentSessionStatus{SessionID: "uid-live", Phase: sessionsv1alpha1.SessionActive}, nil)
	live.Finalizers = []string{TranscriptFinalizer}
	deleting := session("deleting", "uid-deleting", sessionsv1alpha1.AgentSessionStatus{SessionID: "uid-deleting", Phase: sessionsv1alpha1.SessionActive}, nil)
	deleting.Finalizers = []string{TranscriptFinalizer}
	deleting.DeletionTimestamp = &metav1.Time{Time: ownerflowtest.Epoch}
	for _, s := range []*sessionsv1alpha1.AgentSession{live, deleting} {
		if _, err := store.CreateSession(ctx, transcript.SessionHeader{Namespace: "ns", SessionID: s.Status.SessionID, SessionKey: s.Spec.Key}); err != nil {
			t.Fatal(err)
		}
	}
	f := ownerflowtest.NewFixture(t, nil, live, deleting)
	r := &AgentSessionReconciler{Client: f.C, Store: store, Clock: f.Clock, Recorder: f.Events}
	for _, s := range []*sessionsv1alpha1.AgentSession{live, deleting} {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
	}
	got := &sessionsv1alpha1.AgentSession{}
	if err := f.C.Get(ctx, client.ObjectKeyFromObject(live), got); err != nil || len(got.Finalizers) != 0 {
		t.Errorf("the live legacy session: %v, finalizers %v; want none", err, got.Finalizers)
	}
	if _, err := store.Stats(ctx, "ns", "uid-live"); err != nil {
		t.Errorf("the live legacy session's transcript: %v, want live", err)
	}
	if err := f.C.Get(ctx, client.ObjectKeyFromObject(deleting), got); !apierrors.IsNotFound(err) {
		t.Errorf("the legacy session deleted while it carried the finalizer: %v, want gone", err)
	}
	if _, err := store.Stats(ctx, "ns", "uid-deleting"); !errors.Is(err, transcript.ErrNotFound) {
		t.Errorf("its transcript: %v, want archived", err)
	}
}
