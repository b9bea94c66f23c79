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
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/scheme"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// kubectl sessions patch|archive|reset|restore run the sessions tool's actions as the user,
// under its guard: a stale --expected-session-id is refused (forbidden) and changes nothing.
func TestManageVerbs(t *testing.T) {
	const key = "agent:main:main"
	newClient := func() client.WithWatch {
		s := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: sessionkey.ObjectName(key)},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "main"}, Status: sessionsv1alpha1.AgentSessionStatus{SessionID: "sid-1", Phase: sessionsv1alpha1.SessionActive}}
		return testenv.IndexFake(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(s).
			WithStatusSubresource(&sessionsv1alpha1.AgentSession{})).Build()
	}
	cases := map[string]struct {
		args    sessiontools.ManageArgs
		wantOut string
		wantErr string
		check   func(s *sessionsv1alpha1.AgentSession) bool
		retired restorer
	}{
		"patch a label, guarded": {args: sessiontools.ManageArgs{Action: "patch", SessionKey: key, ExpectedSessionID: "sid-1", Label: ptr.To("inbox")},
			wantOut: "agent:main:main patch: ok (sessionId sid-1)\n", check: func(s *sessionsv1alpha1.AgentSession) bool { return s.Spec.Label == "inbox" }},
		"patch the send policy": {args: sessiontools.ManageArgs{Action: "patch", SessionKey: key, SendPolicy: ptr.To("deny")},
			wantOut: "agent:main:main patch: ok (sessionId sid-1)\n", check: func(s *sessionsv1alpha1.AgentSession) bool { return s.Spec.SendPolicy == sessionsv1alpha1.ActionDeny }},
		"archive": {args: sessiontools.ManageArgs{Action: "archive", SessionKey: key, ExpectedSessionID: "sid-1"},
			wantOut: "agent:main:main archive: ok (sessionId sid-1)\n", check: func(s *sessionsv1alpha1.AgentSession) bool {
				return s.Annotations[sessionsv1alpha1.ArchiveAtAnnotation] != ""
			}},
		"reset with a stale sessionId": {args: sessiontools.ManageArgs{Action: "reset", SessionKey: key, ExpectedSessionID: "sid-0"},
			wantErr: `reset agent:main:main: forbidden: session agent:main:main is now sessionId "sid-1", not the expected "sid-0"`,
			check: func(s *sessionsv1alpha1.AgentSession) bool {
				return s.Annotations[sessionsv1alpha1.ResetAnnotation] == ""
			}},
		"restore of a retired session goes to the store": {args: sessiontools.ManageArgs{Action: "restore", SessionKey: "agent:main:gone", ExpectedSessionID: "sid-9"},
			retired: func(_ context.Context, ns string, a sessiontools.ManageArgs) (any, error) {
				return sessiontools.ManageResult{Status: sessiontools.StatusOK, Action: a.Action, SessionKey: a.SessionKey, SessionID: a.ExpectedSessionID}, nil
			},
			wantOut: "agent:main:gone restore: ok (sessionId sid-9)\n"},
		"restore of a retired session the store knows nothing of": {args: sessiontools.ManageArgs{Action: "restore", SessionKey: "agent:main:gone", ExpectedSessionID: "sid-9"},
			retired: func(context.Context, string, sessiontools.ManageArgs) (any, error) {
				return &sessiontools.StatusResult{Status: sessiontools.StatusNotFound, Error: "no record"}, nil
			},
			wantErr: "restore agent:main:gone: not_found: no record"},
		"a failed restore of a kept session stays with its object": {args: sessiontools.ManageArgs{Action: "restore", SessionKey: key, ExpectedSessionID: "sid-1"},
			retired: func(context.Context, string, sessiontools.ManageArgs) (any, error) {
				return nil, errors.New("the store was asked")
			},
			wantErr: "restore agent:main:main: error: session agent:main:main is not archived"},
		"restore of a session not archived": {args: sessiontools.ManageArgs{Action: "restore", SessionKey: key, ExpectedSessionID: "sid-1"},
			wantErr: "restore agent:main:main: error: session agent:main:main is not archived"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cl := newClient()
			var out bytes.Buffer
			err := manage(context.Background(), cl, "team", tc.args, &out, tc.retired)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || out.String() != tc.wantOut {
				t.Fatalf("out %q err %v, want %q", out.String(), err, tc.wantOut)
			}
			if tc.check != nil {
				s := &sessionsv1alpha1.AgentSession{}
				if err := cl.Get(context.Background(), client.ObjectKey{Namespace: "team", Name: sessionkey.ObjectName(key)}, s); err != nil {
					t.Fatal(err)
				}
				if !tc.check(s) {
					t.Errorf("session after: spec %+v annotations %v", s.Spec, s.Annotations)
				}
			}
		})
	}
}

// The help describes the management verbs and their guard.
func TestManageVerbsHelp(t *testing.T) {
	out, _, code := run(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, verb := range []string{"patch", "archive", "reset", "restore"} {
		if !strings.Contains(out, "\n  "+verb+" ") {
			t.Errorf("root help lists no %s:\n%s", verb, out)
		}
		help, _, code := run(t, verb, "--help")
		if code != 0 || !strings.Contains(help, "--expected-session-id") || !strings.Contains(help, "kubectl sessions "+verb) {
			t.Errorf("%s --help (exit %d):\n%s", verb, code, help)
		}
	}
	if _, stderr, code := run(t, "archive", "agent:main:main"); code == 0 || !strings.Contains(stderr, "expected-session-id") {
		t.Errorf("archive without the guard: exit %d, %s", code, stderr)
	}
}
