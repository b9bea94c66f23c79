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

package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestPrintSandbox(t *testing.T) {
	used := metav1.NewTime(time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC))
	ready := &sessionsv1alpha1.SessionSandboxStatus{Claim: "s1", Sandbox: "s1", Phase: sessionsv1alpha1.SandboxReady,
		RuntimeClassName: "gvisor", LastUsed: &used}
	sb := &sandboxv1beta1.Sandbox{ObjectMeta: metav1.ObjectMeta{Name: "s1",
		Annotations: map[string]string{sandboxv1beta1.SandboxPodNameAnnotation: "pool-abc"}},
		Status: sandboxv1beta1.SandboxStatus{NodeName: "node-1"}}
	suspended := ready.DeepCopy()
	suspended.Phase, suspended.RuntimeClassName = sessionsv1alpha1.SandboxSuspended, ""
	cases := map[string]struct {
		sandboxed bool
		st        *sessionsv1alpha1.SessionSandboxStatus
		sb        *sandboxv1beta1.Sandbox
		want      string
	}{
		"not sandboxed": {want: "Sandbox:\tnone: the session is not sandboxed\n"},
		"no call yet":   {sandboxed: true, want: "Sandbox:\tnone: the session has made no tool call in a sandbox\n"},
		"ready, warm pod": {sandboxed: true, st: ready, sb: sb, want: "State:      Ready\nClaim:      s1\nSandbox:    s1\nPod:        pool-abc\nNode:       node-1\n" +
			"Runtime:    gvisor\nLast used:  2026-11-29T05:00:00Z\nMessage:    -\n"},
		"suspended": {sandboxed: true, st: suspended, sb: sb, want: "State:      Suspended\nClaim:      s1\nSandbox:    s1\nPod:        - (suspended)\nNode:       node-1\n" +
			"Runtime:    the node's default\nLast used:  2026-11-29T05:00:00Z\nMessage:    -\n"},
		"sandbox not readable": {sandboxed: true, st: ready, want: "State:      Ready\nClaim:      s1\nSandbox:    s1\nPod:        -\nNode:       -\n" +
			"Runtime:    gvisor\nLast used:  2026-11-29T05:00:00Z\nMessage:    -\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &sessionsv1alpha1.AgentSession{Spec: sessionsv1alpha1.AgentSessionSpec{Sandboxed: tc.sandboxed}}
			s.Status.Sandbox = tc.st
			var out bytes.Buffer
			if err := printSandbox(&out, s, tc.sb); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("card (-want +got):\n%s", diff)
			}
		})
	}
}
