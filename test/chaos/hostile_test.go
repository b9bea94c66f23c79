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

package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
	"github.com/agent-sessions/agent-session-operator/internal/textutil"
)

// hostileInput posts objects a careless or malicious client would, as raw JSON so that even
// invalid UTF-8 reaches the API server. Each is rejected with an error that says what is
// wrong, or accepted and handled to a normal end; the manager survives all of them.
func (e *env) hostileInput(t *testing.T) {
	ctx := context.Background()
	ns := e.namespace(t, "hostile")
	const key = "agent:dora:main"
	e.mustCreate(t, &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dora"},
		Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted}}})
	e.createSessions(t, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sessionkey.ObjectName(key)},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "dora", ChatType: sessionsv1alpha1.ChatTypeDirect}})

	send := func(name, sessionKey, message string) string {
		return fmt.Sprintf(`{"apiVersion":"sessions.agents.dev/v1alpha1","kind":"SessionSend","metadata":{"name":%q},"spec":{"sessionKey":%q,"message":"%s","timeoutSeconds":30}}`,
			name, sessionKey, message)
	}
	var rules strings.Builder
	for i := range 10000 {
		if i > 0 {
			rules.WriteByte(',')
		}
		fmt.Fprintf(&rules, `{"match":{"keyPrefix":"agent:x%d:"},"action":"deny"}`, i)
	}
	cases := []struct {
		name, resource, body string
		wantError            string // "" means accepted
		wantReply            string // for an accepted send
		send                 string // its name
	}{{
		name: "a message near the 1.5 MiB object limit", resource: "sessionsends",
		body:      send("huge", key, strings.Repeat("a", 1400*1024)),
		wantError: "spec.message: Too long: may not be more than 262144 bytes",
	}, {
		name: "invalid UTF-8 in a message is replaced, not stored raw", resource: "sessionsends",
		body:      send("utf8", key, "caf\xe9 \xff\xfe"),
		wantReply: "echo: caf\uFFFD \uFFFD\uFFFD", send: "utf8",
	}, {
		name: "NUL and control characters in a message", resource: "sessionsends",
		body:      send("ctrl", key, `nul\u0000 bell\u0007 esc\u001b[31m`),
		wantReply: "echo: nul\x00 bell\x07 esc\x1b[31m", send: "ctrl",
	}, {
		name: "a session key of 10 KB in a send", resource: "sessionsends",
		body:      send("longkey", "agent:dora:"+strings.Repeat("k", 10*1024), "hi"),
		wantError: "spec.sessionKey: Too long: may not be more than 512 bytes",
	}, {
		name: "a session key of 10 KB", resource: "agentsessions",
		body:      fmt.Sprintf(`{"apiVersion":"sessions.agents.dev/v1alpha1","kind":"AgentSession","metadata":{"name":"longkey"},"spec":{"key":"agent:dora:%s","agentId":"dora"}}`, strings.Repeat("k", 10*1024)),
		wantError: "spec.key: Too long: may not be more than 512 bytes",
	}, {
		name: "an attachment named ../ to escape the workspace", resource: "subagentruns",
		body:      fmt.Sprintf(`{"apiVersion":"sessions.agents.dev/v1alpha1","kind":"SubagentRun","metadata":{"name":"escape"},"spec":{"task":"t","requesterSessionKey":%q,"attachments":[{"name":"../etc/passwd","content":"x"}]}}`, key),
		wantError: "must not contain / or \\",
	}, {
		name: "an attachment that is not strict base64", resource: "subagentruns",
		body:      fmt.Sprintf(`{"apiVersion":"sessions.agents.dev/v1alpha1","kind":"SubagentRun","metadata":{"name":"b64"},"spec":{"task":"t","requesterSessionKey":%q,"attachments":[{"name":"a.bin","encoding":"base64","content":"aGl="}]}}`, key),
		wantError: "not valid base64",
	}, {
		name: "10,000 rules in a policy", resource: "sessionpolicies",
		body:      `{"apiVersion":"sessions.agents.dev/v1alpha1","kind":"SessionPolicy","metadata":{"name":"default"},"spec":{"sendPolicy":{"rules":[` + rules.String() + `]}}}`,
		wantError: "spec.sendPolicy.rules: Too many: 10000: must have at most 256 items",
	}}
	rc, err := rest.RESTClientFor(restConfig(e))
	if err != nil {
		t.Fatal(err)
	}
	var accepted []string
	for _, tc := range cases {
		err := rc.Post().AbsPath("/apis/sessions.agents.dev/v1alpha1/namespaces", ns, tc.resource).
			SetHeader("Content-Type", "application/json").Body([]byte(tc.body)).Do(ctx).Error()
		switch {
		case tc.wantError == "" && err != nil:
			t.Errorf("%s: rejected: %v", tc.name, err)
		case tc.wantError == "":
			accepted = append(accepted, tc.name)
		case err == nil:
			t.Errorf("%s: accepted, want an error saying %q", tc.name, tc.wantError)
		case !strings.Contains(err.Error(), tc.wantError):
			t.Errorf("%s: error %q does not say %q", tc.name, textutil.Truncate(err.Error(), 300), tc.wantError)
		}
	}
	if len(accepted) == 0 || t.Failed() { // an object wrongly accepted would be waited for
		return
	}
	// The accepted sends run to their reply like any other.
	ended, _ := e.waitTerminal(t, ns, len(accepted), 0)
	replies := map[string]sessionsv1alpha1.SessionSendStatus{}
	for _, s := range ended {
		replies[s.Name] = s.Status
	}
	for _, tc := range cases {
		if tc.wantReply == "" {
			continue
		}
		if st := replies[tc.send]; st.Status != sessionsv1alpha1.SendOK || st.Reply != tc.wantReply {
			t.Errorf("%s: send ended %s with reply %q (error %q), want ok with %q", tc.name, st.Status, st.Reply, st.Error, tc.wantReply)
		}
	}
}

// restConfig is the cluster's config for a raw REST client of this API.
func restConfig(e *env) *rest.Config {
	cfg := rest.CopyConfig(e.cluster.Config)
	cfg.GroupVersion = &sessionsv1alpha1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(testenv.Scheme()).WithoutConversion()
	return cfg
}
