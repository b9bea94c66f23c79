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

package controllers

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript/transcripttest"
)

// TranscriptCreated is said only once the status that records the transcript is written: a
// refused write emits nothing, and the retried reconcile says it once.
func TestTranscriptCreatedOnlyAfterTheWriteLands(t *testing.T) {
	refuse := true
	funcs := &interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		if refuse {
			return apierrors.NewConflict(schema.GroupResource{Resource: "agentsessions"}, obj.GetName(), errors.New("stale"))
		}
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}}
	s := &v1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "uid-1"},
		Spec: v1.AgentSessionSpec{Key: "agent:bob:main", AgentID: "bob"}}
	f := newFixture(t, funcs, s)
	r := &AgentSessionReconciler{Client: f.c, Store: transcripttest.NewMemoryStore(), Clock: f.clock, Recorder: f.events}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}

	if _, err := r.Reconcile(context.Background(), req); !apierrors.IsConflict(err) {
		t.Fatalf("reconcile with the status write refused: err %v, want the conflict", err)
	}
	if len(f.events.reasons) != 0 {
		t.Errorf("events = %v, want none before the write lands", f.events.reasons)
	}

	refuse = false
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"TranscriptCreated"}, f.events.reasons); diff != "" {
		t.Errorf("events after the write (-want +got):\n%s", diff)
	}
	got := &v1.AgentSession{}
	if err := f.c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.SessionID != "uid-1" {
		t.Errorf("sessionId %q, want the object's UID", got.Status.SessionID)
	}
}
