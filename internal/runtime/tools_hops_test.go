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

package runtime

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// TestToolsCarryTheHopCount: a send or spawn a tool makes carries the hop count of the
// object that owns the calling turn, plus one; a turn whose owner is gone starts at 1.
func TestToolsCarryTheHopCount(t *testing.T) {
	const key = "agent:main:main"
	// turnReq's owner is the SessionSend send-<turn id>: the "deep" turns' owners exist at
	// hop 2, the "fresh" turns' do not.
	owner := func(turn string) client.Object {
		return &v1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "send-" + turn,
			Annotations: map[string]string{v1.HopsAnnotation: "2"}},
			Spec: v1.SessionSendSpec{SessionKey: key, Message: "owner"}}
	}
	var rules []v1.ScriptRule
	for _, chain := range []string{"deep", "fresh"} {
		rules = append(rules,
			toolRule("^spawn-"+chain, "sessions_spawn", map[string]any{"task": chain}),
			toolRule("^send-"+chain, "sessions_send", map[string]any{"sessionKey": "agent:main:other", "message": chain, "timeoutSeconds": 0}))
	}
	f := newFixture(t, []client.Object{
		scriptedAgent("main", rules...),
		session(key, "main", "s-main"),
		session("agent:main:other", "main", "s-other"),
		owner("deep-spawn"), owner("deep-send"),
	})
	for _, chain := range []string{"deep", "fresh"} {
		for _, tool := range []string{"spawn", "send"} {
			id := chain + "-" + tool
			f.submit(turnReq(id, key, tool+"-"+chain))
			if r := f.await(id); r.Err != nil {
				t.Fatalf("turn %s: %v", id, r.Err)
			}
		}
	}
	ctx := context.Background()
	var runs v1.SubagentRunList
	var sends v1.SessionSendList
	if err := f.client.List(ctx, &runs); err != nil {
		t.Fatal(err)
	}
	if err := f.client.List(ctx, &sends); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs.Items {
		got["spawn "+r.Spec.Task] = r.Annotations[v1.HopsAnnotation]
		if r.Annotations[v1.ChildSessionKeyAnnotation] == "" {
			t.Errorf("run %s lost its child key", r.Name)
		}
	}
	for _, s := range sends.Items {
		if s.Spec.Message != "owner" {
			got["send "+s.Spec.Message] = s.Annotations[v1.HopsAnnotation]
		}
	}
	want := map[string]string{"spawn deep": "3", "send deep": "3", "spawn fresh": "1", "send fresh": "1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hops (-want +got):\n%s", diff)
	}
}
