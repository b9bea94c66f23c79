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

package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// listFixture is a handler for alice on agent a, whose transcript reads are allowed on the
// sessions of readable only, over sends of alice, bob and another agent.
func listFixture(t *testing.T) *agentHandler {
	t.Helper()
	epoch := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var objs []client.Object
	mk := func(name, user, agent, session, context string, at int, phase sessionsv1alpha1.SendPhase) {
		objs = append(objs, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(at) * time.Minute)),
			Labels:            map[string]string{LabelAgent: agent, LabelCaller: CallerLabel(user)},
			Annotations:       map[string]string{AnnotationContext: context}},
			Spec:   sessionsv1alpha1.SessionSendSpec{SessionKey: session, Message: "m"},
			Status: sessionsv1alpha1.SessionSendStatus{Phase: phase}})
	}
	mk("a1", "alice", "a", "agent:a:a2a:c1", "c1", 1, sessionsv1alpha1.SendCompleted)
	mk("a2", "alice", "a", "agent:a:a2a:c1", "c1", 2, sessionsv1alpha1.SendRunning)
	mk("a3", "alice", "a", "agent:a:a2a:c2", "c2", 3, sessionsv1alpha1.SendCompleted)
	mk("a4", "alice", "a", "agent:a:a2a:hidden", "hidden", 4, sessionsv1alpha1.SendCompleted)
	mk("b1", "bob", "a", "agent:a:a2a:c1", "c1", 5, sessionsv1alpha1.SendCompleted)
	mk("x1", "alice", "x", "agent:x:a2a:c1", "c1", 6, sessionsv1alpha1.SendCompleted)
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	hidden := sessionkey.ObjectName("agent:a:a2a:hidden")
	access := func(_ context.Context, r caller.Right, name string) error {
		if r != caller.ReadTranscript || name == hidden {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "agentsessions"}, name, fmt.Errorf("no %s", r.Name))
		}
		return nil
	}
	return &agentHandler{call: &sessiontools.Call{Env: &sessiontools.Env{Client: c, Access: access}, Namespace: "team"},
		agent: &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a"}}, user: "alice"}
}

func ids(tasks []*a2a.Task) []string {
	out := []string{}
	for _, t := range tasks {
		out = append(out, string(sessiontools.OwnerUIDOf(string(t.ID))))
	}
	return out
}

// ListTasks lists the caller's own tasks with this agent, newest first, those of sessions it
// may read only, filtered by context and state.
func TestListTasks(t *testing.T) {
	for name, tc := range map[string]struct {
		req  a2a.ListTasksRequest
		want []string
	}{
		"the caller's own, readable, newest first": {want: []string{"uid-a3", "uid-a2", "uid-a1"}},
		"by context":                          {req: a2a.ListTasksRequest{ContextID: "c1"}, want: []string{"uid-a2", "uid-a1"}},
		"by state":                            {req: a2a.ListTasksRequest{Status: a2a.TaskStateCompleted}, want: []string{"uid-a3", "uid-a1"}},
		"by context and state":                {req: a2a.ListTasksRequest{ContextID: "c1", Status: a2a.TaskStateWorking}, want: []string{"uid-a2"}},
		"a state no task has filters nothing": {req: a2a.ListTasksRequest{ContextID: "c1", Status: "UNRECOGNIZED"}, want: []string{"uid-a2", "uid-a1"}},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := listFixture(t).ListTasks(context.Background(), &tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, ids(resp.Tasks)); d != "" {
				t.Errorf("tasks (-want +got):\n%s", d)
			}
			if resp.TotalSize != len(tc.want) || resp.NextPageToken != "" {
				t.Errorf("totalSize %d, next %q; want %d, none", resp.TotalSize, resp.NextPageToken, len(tc.want))
			}
		})
	}
}

// Pages follow one another without a gap or a repeat; a bad token or size is refused.
func TestListTasksPages(t *testing.T) {
	h := listFixture(t)
	var got []string
	token := ""
	for range 4 {
		resp, err := h.ListTasks(context.Background(), &a2a.ListTasksRequest{PageSize: 2, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(resp.Tasks)...)
		if token = resp.NextPageToken; token == "" {
			break
		}
	}
	if d := cmp.Diff([]string{"uid-a3", "uid-a2", "uid-a1"}, got); d != "" {
		t.Errorf("paged tasks (-want +got):\n%s", d)
	}
	for name, req := range map[string]a2a.ListTasksRequest{
		"a token not ours": {PageToken: "bm90IG91cnM"},
		"a page too large": {PageSize: maxPageSize + 1},
	} {
		if _, err := h.ListTasks(context.Background(), &req); err == nil {
			t.Errorf("%s: listed, want invalid params", name)
		}
	}
}

// Every task door has the one rule: a task is its caller's. Bob's task, in a session alice
// may read, is as unknown to her GetTask, CancelTask and SubscribeToTask as an id nobody
// made; her own are found.
func TestTaskDoorsFindOnlyTheCallersTasks(t *testing.T) {
	h := listFixture(t)
	id := func(name string) a2a.TaskID {
		return a2a.TaskID(sessiontools.TurnID(types.UID("uid-"+name), "round-1"))
	}
	for name, tc := range map[string]struct {
		id   a2a.TaskID
		want error
	}{
		"her own":               {id: id("a1")},
		"bob's, in c1":          {id: id("b1"), want: a2a.ErrTaskNotFound},
		"an id nobody made":     {id: id("zz"), want: a2a.ErrTaskNotFound},
		"another agent's, hers": {id: id("x1"), want: a2a.ErrTaskNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: tc.id})
			if !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Errorf("GetTask: %v, want %v", err, tc.want)
			}
			if tc.want == nil {
				return
			}
			if _, err := h.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: tc.id}); !errors.Is(err, tc.want) {
				t.Errorf("CancelTask: %v, want %v", err, tc.want)
			}
			for _, err := range h.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: tc.id}) {
				if !errors.Is(err, tc.want) {
					t.Errorf("SubscribeToTask: %v, want %v", err, tc.want)
				}
				break
			}
		})
	}
}
