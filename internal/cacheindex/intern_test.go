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

package cacheindex

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// decoded is a session as the decoder makes it: every string its own copy.
func decoded(i int) *sessionsv1alpha1.AgentSession {
	c := strings.Clone
	uid := c("0f1e2d3c-" + strconv.Itoa(i))
	return &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Name: c("s" + strconv.Itoa(i)), Namespace: c("team"), UID: types.UID(uid),
			Finalizers: []string{c("sessions.agents.dev/transcript")}},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: c("agent:main:webchat:group:g" + strconv.Itoa(i)), AgentID: c("main"), Channel: sessionsv1alpha1.Channel(c("webchat"))},
		Status: sessionsv1alpha1.AgentSessionStatus{SessionID: c(uid), Phase: sessionsv1alpha1.SessionPhase(c("Active")),
			Conditions: []metav1.Condition{{Type: c("Ready"), Status: metav1.ConditionStatus(c("True")), Reason: c("TranscriptReady")}}},
	}
}

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestInternSharesRepeatedStrings(t *testing.T) {
	a, _ := Intern(decoded(1))
	b, _ := Intern(decoded(2))
	x, y := a.(*sessionsv1alpha1.AgentSession), b.(*sessionsv1alpha1.AgentSession)
	for name, pair := range map[string][2]string{
		"namespace": {x.Namespace, y.Namespace}, "finalizer": {x.Finalizers[0], y.Finalizers[0]},
		"agentId": {x.Spec.AgentID, y.Spec.AgentID}, "phase": {string(x.Status.Phase), string(y.Status.Phase)},
		"condition reason": {x.Status.Conditions[0].Reason, y.Status.Conditions[0].Reason},
	} {
		if !same(pair[0], pair[1]) {
			t.Errorf("%s: two copies of %q", name, pair[0])
		}
	}
	if same(x.Name, y.Name) || x.Name == y.Name {
		t.Errorf("names differ and must stay apart: %q, %q", x.Name, y.Name)
	}
	if !same(x.Status.SessionID, string(x.UID)) {
		t.Error("the sessionId equals the UID but is a second copy")
	}
}

// The sessionId and the UID are the file name's part of the transcript path, not copies.
func TestInternSharesTheTranscriptPath(t *testing.T) {
	for name, path := range map[string]string{
		"shared":          "/var/lib/agent-sessions/team/0f1e2d3c-1.jsonl",
		"another file":    "/var/lib/agent-sessions/team/other.jsonl",
		"a longer name":   "/var/lib/agent-sessions/team/x0f1e2d3c-1.jsonl",
		"no suffix":       "/var/lib/agent-sessions/team/0f1e2d3c-1",
		"the id is whole": "0f1e2d3c-1.jsonl",
		"none":            "",
	} {
		t.Run(name, func(t *testing.T) {
			s := decoded(1)
			s.Status.TranscriptPath = strings.Clone(path)
			o, _ := Intern(s)
			got := o.(*sessionsv1alpha1.AgentSession)
			if got.Status.SessionID != "0f1e2d3c-1" || string(got.UID) != "0f1e2d3c-1" || got.Status.TranscriptPath != path {
				t.Fatalf("values changed: sessionId %q, uid %q, path %q", got.Status.SessionID, got.UID, got.Status.TranscriptPath)
			}
			p := got.Status.TranscriptPath
			inPath := unsafe.StringData(got.Status.SessionID) == unsafe.StringData(p[min(len(p), 29):])
			if want := name == "shared"; inPath != want {
				t.Errorf("sessionId shares the path: %v, want %v", inPath, want)
			}
			if !same(got.Status.SessionID, string(got.UID)) {
				t.Error("the sessionId and the UID are two copies")
			}
		})
	}
}

// Unique values from a namespace user cannot grow the interner past its bound.
func TestInternIsBounded(t *testing.T) {
	for i := range maxInterned + 100 {
		s := decoded(i)
		s.Spec.AgentID = "agent-" + strconv.Itoa(i)
		_, _ = Intern(s)
	}
	strs.mu.Lock()
	n := len(strs.m)
	strs.mu.Unlock()
	if n > maxInterned {
		t.Fatalf("interner holds %d strings, bound %d", n, maxInterned)
	}
}

// A shard's objects all carry its label alone: their cached copies share one map, and a
// deep copy (what the cache's reads hand out) is the reader's own to change.
func TestInternSharesOneLabelSets(t *testing.T) {
	labelled := func(i int, labels map[string]string) *sessionsv1alpha1.AgentSession {
		s := decoded(i)
		s.Labels = labels
		return s
	}
	a, _ := Intern(labelled(1, map[string]string{"sessions.agents.dev/shard": "1"}))
	b, _ := Intern(labelled(2, map[string]string{"sessions.agents.dev/shard": "1"}))
	x, y := a.(*sessionsv1alpha1.AgentSession), b.(*sessionsv1alpha1.AgentSession)
	if !sameMap(x.Labels, y.Labels) {
		t.Error("two equal one-label sets are two maps")
	}
	c, _ := Intern(labelled(3, map[string]string{"sessions.agents.dev/shard": "0"}))
	if z := c.(*sessionsv1alpha1.AgentSession); z.Labels["sessions.agents.dev/shard"] != "0" || sameMap(x.Labels, z.Labels) {
		t.Errorf("another shard's label reads %v", z.Labels)
	}
	two := map[string]string{"sessions.agents.dev/shard": "1", "team": "a"}
	d, _ := Intern(labelled(4, two))
	if !sameMap(d.(*sessionsv1alpha1.AgentSession).Labels, two) {
		t.Error("a two-label set was replaced")
	}
	cp := x.DeepCopy()
	cp.Labels["team"] = "b"
	if len(y.Labels) != 1 {
		t.Errorf("changing a deep copy's labels changed the shared set: %v", y.Labels)
	}
}

// Unique one-label sets from a namespace user cannot grow the shared sets past their bound.
func TestInternLabelSetsAreBounded(t *testing.T) {
	for i := range maxLabelSets + 100 {
		s := decoded(i)
		s.Labels = map[string]string{"x": strconv.Itoa(i)}
		_, _ = Intern(s)
	}
	strs.mu.Lock()
	n := len(strs.labels)
	strs.mu.Unlock()
	if n > maxLabelSets {
		t.Fatalf("interner holds %d label sets, bound %d", n, maxLabelSets)
	}
}

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
