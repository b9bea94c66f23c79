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

package lookup

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

func TestSendTarget(t *testing.T) {
	session := func(name, key, id string) *sessionsv1alpha1.AgentSession {
		return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key}, Status: sessionsv1alpha1.AgentSessionStatus{SessionID: id}}
	}
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		session("bob-main", "agent:bob:main", "sid-bob"), session("ann-x", "agent:ann:group:x", "sid-ann"))).Build()
	l := New(c, nil)
	const mainText = "main names the requester's main session and this send has no fromSessionKey; use the target's full key, e.g. agent:<agentId>:main"
	type result struct{ Session, Key, Err string }
	cases := map[string]struct {
		ref, requester string
		want           result
	}{
		"main of the requester":      {ref: "main", requester: "bob", want: result{Session: "agent:bob:main", Key: "agent:bob:main"}},
		"global is main":             {ref: "global", requester: "bob", want: result{Session: "agent:bob:main", Key: "agent:bob:main"}},
		"main without a requester":   {ref: "main", want: result{Err: mainText}},
		"global without a requester": {ref: "global", want: result{Err: mainText}},
		"a full key":                 {ref: "agent:ann:group:x", want: result{Session: "agent:ann:group:x", Key: "agent:ann:group:x"}},
		"a sessionId":                {ref: "sid-ann", requester: "bob", want: result{Session: "agent:ann:group:x", Key: "sid-ann"}},
		"main not created yet":       {ref: "main", requester: "cy", want: result{Key: "agent:cy:main"}},
		"a key no session has":       {ref: "agent:ann:group:y", want: result{Key: "agent:ann:group:y"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, key, err := l.SendTarget(context.Background(), "ns", tc.ref, tc.requester)
			got := result{Key: key}
			if s != nil {
				got.Session = s.Spec.Key
			}
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SendTarget(%q, %q) (-want +got):\n%s", tc.ref, tc.requester, diff)
			}
		})
	}
}

func TestTargetRefKey(t *testing.T) {
	labelled := func(name, key, label string, archived bool) *sessionsv1alpha1.AgentSession {
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, Label: label}}
		if archived {
			s.Status.Phase = sessionsv1alpha1.SessionArchived
		}
		return s
	}
	c := testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		labelled("a", "agent:ann:webchat:group:a", "ops", false),
		labelled("b", "agent:bob:webchat:group:b", "twice", false),
		labelled("c", "agent:bob:webchat:group:c", "twice", false),
		labelled("d", "agent:bob:webchat:group:d", "gone", true))).Build()
	l := New(c, nil)
	bobOnly := func(s *sessionsv1alpha1.AgentSession) bool { return s.Spec.Key != "agent:ann:webchat:group:a" }
	type result struct{ Key, Err string }
	cases := map[string]struct {
		ref  TargetRef
		want result
	}{
		"a ref is itself":      {ref: TargetRef{Ref: "main"}, want: result{Key: "main"}},
		"an agent's main":      {ref: TargetRef{AgentID: "bob"}, want: result{Key: "agent:bob:main"}},
		"a bad agent id":       {ref: TargetRef{AgentID: "a:b"}, want: result{Err: `agentId "a:b" is not a valid agent id`}},
		"a label":              {ref: TargetRef{Label: "ops"}, want: result{Key: "agent:ann:webchat:group:a"}},
		"a label on two":       {ref: TargetRef{Label: "twice"}, want: result{Err: `the label "twice" is on 2 sessions (agent:bob:webchat:group:b, agent:bob:webchat:group:c); name one by sessionKey`}},
		"an archived label":    {ref: TargetRef{Label: "gone"}, want: result{Err: `no active session has the label "gone"`}},
		"nothing named":        {want: result{Err: "name the target with one of sessionKey, label or agentId"}},
		"two ways of naming":   {ref: TargetRef{Ref: "main", Label: "ops"}, want: result{Err: "name the target with only one of sessionKey, label or agentId"}},
		"a label beyond sight": {ref: TargetRef{Label: "ops", Visible: bobOnly}, want: result{Err: `no active session has the label "ops"`}},
		"one of two in sight":  {ref: TargetRef{Label: "twice", Visible: func(s *sessionsv1alpha1.AgentSession) bool { return s.Name == "c" }}, want: result{Key: "agent:bob:webchat:group:c"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			key, err := l.TargetRefKey(context.Background(), "ns", tc.ref)
			got := result{Key: key}
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("TargetRefKey(%+v) (-want +got):\n%s", tc.ref, diff)
			}
		})
	}
}
