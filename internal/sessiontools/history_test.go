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

package sessiontools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// noTranscripts is a store that must not be read.
type noTranscripts struct{ t *testing.T }

func (s noTranscripts) Read(ctx context.Context, namespace, sessionID string, o transcript.ReadOptions) (transcript.Page, error) {
	s.t.Errorf("the transcript of %s was read", sessionID)
	return transcript.Page{}, nil
}

// sessions_history names its session: without sessionKey the call is an argument error,
// with nothing read; a session outside the caller's visibility is forbidden, as a send to it
// is, and its transcript is not read.
func TestHistoryRefusals(t *testing.T) {
	self := session("agent:bob:main", "bob", "sid-bob")
	other := session("agent:cy:main", "cy", "sid-cy")
	pol := &sessionsv1alpha1.SessionPolicy{Spec: sessionsv1alpha1.SessionPolicySpec{Visibility: sessionsv1alpha1.VisibilityTree}}
	pol.Name, pol.Namespace = "default", ns
	cases := map[string]struct {
		args string
		want string
	}{
		"no sessionKey":          {args: `{}`, want: `{"status":"error","error":"sessionKey is required"}`},
		"an empty sessionKey":    {args: `{"sessionKey":"","limit":5}`, want: `{"status":"error","error":"sessionKey is required"}`},
		"outside the visibility": {args: `{"sessionKey":"agent:cy:main"}`, want: `{"status":"forbidden","error":`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fc := newFakeClient(self.DeepCopy(), other.DeepCopy(), pol.DeepCopy())
			c := &Call{Env: &Env{Client: fc, Reader: fc, Store: noTranscripts{t}}, Namespace: ns, Session: self}
			out, err := historyTool().Run(t.Context(), c, json.RawMessage(tc.args))
			if err == nil {
				t.Fatalf("history answered %+v, want a refusal", out)
			}
			if got := ErrorResult(err); !strings.HasPrefix(got, tc.want) {
				t.Errorf("result %s, want one starting %s", got, tc.want)
			}
		})
	}
}
