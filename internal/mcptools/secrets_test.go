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

package mcptools

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
)

// The manager's reader applies the Secret rule to MCP headers as to API keys: a Secret the
// Agent's writer was not vouched for and that did not opt in is never read, and the answer
// is the same sentence whether it exists or not.
func TestHeaderSecretsFollowTheSecretRule(t *testing.T) {
	secret := func(name string, labels map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels},
			Data: map[string][]byte{"header": []byte("Bearer " + name)}}
	}
	read := SecretsFrom(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		secret("private", nil),
		secret("shared", map[string]string{sessionsv1alpha1.AgentUsableLabel: "true"}),
		secret("vouched", nil),
	).Build())
	agent := testAgent(1)
	agent.Annotations = map[string]string{sessionsv1alpha1.VouchedSecretsAnnotation: "vouched,gone"}
	ref := func(name string) *corev1.SecretKeySelector {
		return &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "header"}
	}
	cases := map[string]struct {
		secret, want, wantErr string
	}{
		"opted in":            {secret: "shared", want: "Bearer shared"},
		"vouched for":         {secret: "vouched", want: "Bearer vouched"},
		"neither, present":    {secret: "private", wantErr: policy.UnusableSecret("private")},
		"neither, absent":     {secret: "nowhere", wantErr: policy.UnusableSecret("nowhere")},
		"vouched for, absent": {secret: "gone", wantErr: `secret "gone" not found`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := read(t.Context(), agent, ref(tc.secret))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("read %s = %q, %v; want error %q", tc.secret, v, err, tc.wantErr)
				}
				return
			}
			if err != nil || string(v) != tc.want {
				t.Fatalf("read %s = %q, %v; want %q", tc.secret, v, err, tc.want)
			}
		})
	}
}

// The manager's pool judges server URLs by the egress policy: loopback is refused unless an
// operator allows it, before anything is dialed.
func TestEgressPolicyOnServerURLs(t *testing.T) {
	ts := newTestServer(t, false)
	closed, err := egress.Parse(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	set := newTestPool(t, ManagerOptions(nil, closed)).Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL}))
	st := set.Status()
	if len(set.Tools()) != 0 || st[0].Connected || st[0].Reason != ReasonEgressRefused || !strings.Contains(st[0].Message, "--egress-allow") {
		t.Errorf("loopback server: tools %v status %+v", toolNames(set), st)
	}
	if n := ts.Requests(); n != 0 {
		t.Errorf("a refused server was dialed %d times", n)
	}

	open, err := egress.Parse([]string{"127.0.0.1/32"}, false)
	if err != nil {
		t.Fatal(err)
	}
	set = newTestPool(t, ManagerOptions(nil, open)).Resolve(t.Context(), testAgent(1, sessionsv1alpha1.MCPServer{Name: "s", URL: ts.URL}))
	if !set.Has("mcp__s__echo") {
		t.Errorf("allowed loopback server: tools %v status %+v", toolNames(set), set.Status())
	}
}
