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
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/store"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
	"github.com/agent-sessions/agent-session-operator/internal/turns"
)

// Sessions carry no finalizer: a delete is cleaned up after the object went (transcript
// archived, workspace removed), the orphan sweep archives a live transcript no session holds
// and never one a session holds (live, adopted from a retired record), also when its cache
// holds none of them (a shard's before the relabel), and sessions an older manager made
// with the finalizer lose it, or, deleted while they carried it, go as before.
func TestDeleteCleanupAndOrphanSweep(t *testing.T) {
	cfg, c := testenv.StartT(t)
	ctx := t.Context()
	root := t.TempDir()
	st := transcripttest.OpenStore(t, filepath.Join(root, "transcripts"))
	retired, err := store.OpenRetiredStore(filepath.Join(root, "retired"))
	if err != nil {
		t.Fatal(err)
	}
	workspaces := filepath.Join(root, "workspaces")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	legacyLive, legacyDeleting := legacySessions(ctx, t, c, st)

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cacheindex.CacheOptions(), Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&AgentSessionReconciler{Client: mgr.GetClient(), Store: st, Retired: retired, WorkspaceRoot: workspaces,
		Recorder: mgr.GetEventRecorder("agentsession-controller")}).SetupWith(ctrl.NewControllerManagedBy(mgr), 2); err != nil {
		t.Fatal(err)
	}
	if err := (&Cleanup{Client: mgr.GetClient(), Store: st, WorkspaceRoot: workspaces}).SetupWithManager(mgr, 1); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	live := func(sid string) bool {
		ids, err := st.LiveSessionIDs(ctx, "team", "", transcript.MaxLivePage)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(ids, sid)
	}

	legacyUpgraded(ctx, t, c, live, legacyLive, legacyDeleting)
	deleteArchives(ctx, t, c, root, workspaces, live)
	adopted := retiredAndAdopted(ctx, t, c, retired)
	s2 := initialized(ctx, t, c, newSession("s2", "agent:a:two", nil))
	sweepsOrphansOnly(ctx, t, cfg, mgr, st, workspaces, live, []string{s2.Status.SessionID, adopted, legacyLive.Status.SessionID})
}

// legacyUpgraded: the live legacy session loses the finalizer and keeps its transcript; the
// one deleted while it carried it goes, its transcript archived.
func legacyUpgraded(ctx context.Context, t *testing.T, c client.Client, live func(string) bool, legacyLive, legacyDeleting *sessionsv1alpha1.AgentSession) {
	t.Helper()
	testenv.Eventually(t, "the legacy finalizer taken off a live session", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(legacyLive), legacyLive)
		return err == nil && len(legacyLive.Finalizers) == 0, err
	})
	if !live(legacyLive.Status.SessionID) {
		t.Errorf("the live legacy session's transcript was archived")
	}
	testenv.Eventually(t, "the legacy session deleted with its finalizer gone, its transcript archived", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(legacyDeleting), &sessionsv1alpha1.AgentSession{})
		return apierrors.IsNotFound(err) && !live(legacyDeleting.Status.SessionID), client.IgnoreNotFound(err)
	})
}

// deleteArchives: no finalizer is ever written; once a deleted session's object is gone its
// transcript is archived (kept on the volume as *.deleted.<unix>) and its workspace removed.
func deleteArchives(ctx context.Context, t *testing.T, c client.Client, root, workspaces string, live func(string) bool) {
	t.Helper()
	s1 := initialized(ctx, t, c, newSession("s1", "agent:a:one", nil))
	if len(s1.Finalizers) != 0 {
		t.Errorf("a new session's finalizers %v, want none", s1.Finalizers)
	}
	ws := turns.WorkspaceDir(workspaces, "team", s1.Status.SessionID)
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, s1); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the deleted session's transcript archived and its workspace removed", func() (bool, error) {
		_, err := os.Stat(ws)
		return !live(s1.Status.SessionID) && os.IsNotExist(err), nil
	})
	kept, err := filepath.Glob(filepath.Join(root, "transcripts", "team", s1.Status.SessionID+".jsonl.deleted.*"))
	if err != nil || len(kept) != 1 {
		t.Errorf("the archived transcript on the volume: %v %v, want one *.deleted.<unix>", kept, err)
	}
}

// sweepsOrphansOnly: the sweep archives a live transcript no session holds, with its
// workspace, and none of held nor an archived one; through a cache that holds none of the
// sessions (a shard's before the relabel stamps them) too, the API server's answer keeping
// theirs.
func sweepsOrphansOnly(ctx context.Context, t *testing.T, cfg *rest.Config, mgr ctrl.Manager, st transcript.Store, workspaces string,
	live func(string) bool, held []string) {
	t.Helper()
	for _, orphan := range []string{"0000-orphan", "0000-archived"} {
		if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: "team", SessionID: orphan, SessionKey: "agent:a:" + orphan}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Archive(ctx, "team", "0000-archived"); err != nil {
		t.Fatal(err)
	}
	orphanWS := turns.WorkspaceDir(workspaces, "team", "0000-orphan")
	if err := os.MkdirAll(orphanWS, 0o755); err != nil {
		t.Fatal(err)
	}
	keptHeld := func(how string) {
		for _, sid := range held {
			if !live(sid) {
				t.Errorf("the sweep %s archived %s, which a session holds", how, sid)
			}
		}
	}

	sweep := &OrphanSweep{Cache: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Store: st, WorkspaceRoot: workspaces}
	n, err := sweep.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d archived, %v; want the one orphan", n, err)
	}
	keptHeld("through the manager's cache")
	if _, err := os.Stat(orphanWS); live("0000-orphan") || !os.IsNotExist(err) {
		t.Errorf("the orphan: live %v, workspace %v; want archived, removed", live("0000-orphan"), err)
	}

	blind, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme(), ByObject: map[client.Object]cache.ByObject{
		&sessionsv1alpha1.AgentSession{}: {Label: labels.SelectorFromSet(labels.Set{"example.com/none": "x"})}}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = blind.Start(ctx) }()
	if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: "team", SessionID: "0000-orphan-2", SessionKey: "agent:a:gone2"}); err != nil {
		t.Fatal(err)
	}
	sweep.Cache = blind
	if _, err := blind.GetInformer(ctx, &sessionsv1alpha1.AgentSession{}); err != nil || !blind.WaitForCacheSync(ctx) {
		t.Fatalf("the blind cache: %v", err)
	}
	if n, err := sweep.Sweep(ctx); err != nil || n != 1 || live("0000-orphan-2") {
		t.Errorf("sweep through a blind cache: %d archived, %v; want the new orphan alone", n, err)
	}
	keptHeld("through a blind cache")
}

// newSession is a session of Agent "a" in namespace team.
func newSession(name, key string, annotations map[string]string) *sessionsv1alpha1.AgentSession {
	return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team", Annotations: annotations},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "a"}}
}

// initialized creates s and waits for its transcript.
func initialized(ctx context.Context, t *testing.T, c client.Client, s *sessionsv1alpha1.AgentSession) *sessionsv1alpha1.AgentSession {
	t.Helper()
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, s.Name+"'s transcript", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(s), s)
		return s.Status.SessionID != "" && s.Status.Phase == sessionsv1alpha1.SessionActive, err
	})
	return s
}

// legacySessions are two sessions as an older manager left them, finalizer, transcript and
// status, made before this manager starts: one live, one deleted since.
func legacySessions(ctx context.Context, t *testing.T, c client.Client, st transcript.Store) (live, deleting *sessionsv1alpha1.AgentSession) {
	t.Helper()
	var out []*sessionsv1alpha1.AgentSession
	for _, name := range []string{"legacy-live", "legacy-deleting"} {
		s := newSession(name, "agent:a:"+name, nil)
		s.Finalizers = []string{TranscriptFinalizer}
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		s.Status = sessionsv1alpha1.AgentSessionStatus{SessionID: string(s.UID), Phase: sessionsv1alpha1.SessionActive}
		if err := c.Status().Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateSession(ctx, transcript.SessionHeader{Namespace: "team", SessionID: string(s.UID), SessionKey: s.Spec.Key, Name: s.Name}); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := c.Delete(ctx, out[1]); err != nil {
		t.Fatal(err)
	}
	return out[0], out[1]
}

// retiredAndAdopted archives a session, retires it as the SessionPolicy's retention does
// (record, then delete), and restores it in a new object of its name, which adopts the
// transcript: its sessionId, not its new object's UID.
func retiredAndAdopted(ctx context.Context, t *testing.T, c client.Client, retired transcript.Retirer) string {
	t.Helper()
	r := initialized(ctx, t, c, newSession("r", "agent:a:retired", nil))
	sid := r.Status.SessionID
	patch := client.MergeFrom(r.DeepCopy())
	r.Status.Phase = sessionsv1alpha1.SessionArchived
	if err := c.Status().Patch(ctx, r, patch); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "r archived", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(r), r)
		return meta.IsStatusConditionTrue(r.Status.Conditions, sessionsv1alpha1.ConditionArchived), err
	})
	if _, err := retired.Retire(ctx, transcript.RetiredSession{Namespace: "team", Name: "r", SessionID: sid, Key: r.Spec.Key, AgentID: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, r); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "r gone", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(r), &sessionsv1alpha1.AgentSession{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	again := initialized(ctx, t, c, newSession("r", "agent:a:retired", map[string]string{sessionsv1alpha1.RestoreFromAnnotation: sid}))
	if again.Status.SessionID != sid {
		t.Fatalf("the restored session's sessionId %s, want the retired %s", again.Status.SessionID, sid)
	}
	return sid
}
