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
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// TestToolsCarryTheHopCountAndChain: a send or spawn a tool makes carries the hop count of
// the object that owns the calling turn, plus one, and its chain: the owner's, or the owner
// itself when it is the root; a turn whose owner is gone starts at hop 1.
func TestToolsCarryTheHopCountAndChain(t *testing.T) {
	const key = "agent:main:main"
	// turnReq's owner is the SessionSend send-<turn id> (UID: the turn id): the "deep" turns'
	// owners exist at hop 2 as roots, the "member" turns' at hop 2 in the chain of send
	// "seed", the "fresh" turns' do not exist.
	owner := func(turn string, labels, annotations map[string]string) client.Object {
		annotations[sessionsv1alpha1.HopsAnnotation] = "2"
		return &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "send-" + turn,
			Labels: labels, Annotations: annotations},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: key, Message: "owner"}}
	}
	member := func(turn string) client.Object {
		return owner(turn, map[string]string{sessionsv1alpha1.ChainLabel: "seed-uid"}, map[string]string{sessionsv1alpha1.ChainRootAnnotation: "SessionSend/seed"})
	}
	var rules []sessionsv1alpha1.ScriptRule
	chains := []string{"deep", "member", "fresh"}
	for _, chain := range chains {
		rules = append(rules,
			toolRule("^spawn-"+chain, "sessions_spawn", map[string]any{"task": chain}),
			toolRule("^send-"+chain, "sessions_send", map[string]any{"sessionKey": "agent:main:other", "message": chain, "timeoutSeconds": 0}))
	}
	f := newFixture(t, []client.Object{
		scriptedAgent("main", rules...),
		session(key, "main", "s-main"),
		session("agent:main:other", "main", "s-other"),
		owner("deep-spawn", nil, map[string]string{}), owner("deep-send", nil, map[string]string{}),
		member("member-spawn"), member("member-send"),
	})
	for _, chain := range chains {
		for _, tool := range []string{"spawn", "send"} {
			id := chain + "-" + tool
			f.submit(turnReq(id, key, tool+"-"+chain))
			if r := f.await(id); r.Err != nil {
				t.Fatalf("turn %s: %v", id, r.Err)
			}
		}
	}
	ctx := context.Background()
	var runs sessionsv1alpha1.SubagentRunList
	var sends sessionsv1alpha1.SessionSendList
	if err := f.client.List(ctx, &runs); err != nil {
		t.Fatal(err)
	}
	if err := f.client.List(ctx, &sends); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs.Items {
		got["spawn "+r.Spec.Task] = marks(r.ObjectMeta)
		if r.Annotations[sessionsv1alpha1.ChildSessionKeyAnnotation] == "" {
			t.Errorf("run %s lost its child key", r.Name)
		}
	}
	for _, s := range sends.Items {
		if s.Spec.Message != "owner" {
			got["send "+s.Spec.Message] = marks(s.ObjectMeta)
		}
	}
	want := map[string]string{
		"spawn deep": "hops 3, chain deep-spawn (SessionSend/send-deep-spawn)", "send deep": "hops 3, chain deep-send (SessionSend/send-deep-send)",
		"spawn member": "hops 3, chain seed-uid (SessionSend/seed)", "send member": "hops 3, chain seed-uid (SessionSend/seed)",
		"spawn fresh": "hops 1, chain fresh-spawn (SessionSend/send-fresh-spawn)", "send fresh": "hops 1, chain fresh-send (SessionSend/send-fresh-send)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hops and chain (-want +got):\n%s", diff)
	}
}

func marks(m metav1.ObjectMeta) string {
	return fmt.Sprintf("hops %s, chain %s (%s)", m.Annotations[sessionsv1alpha1.HopsAnnotation], m.Labels[sessionsv1alpha1.ChainLabel], m.Annotations[sessionsv1alpha1.ChainRootAnnotation])
}
