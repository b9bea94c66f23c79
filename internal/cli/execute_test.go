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
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), code
}

func TestHelpNamesThePluginAsPeopleTypeIt(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"send", "--help"}, {"policy", "explain", "--help"}} {
		out, _, code := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if strings.Contains(out, "kubectl-sessions") {
			t.Errorf("%v: help names the binary, not the plugin:\n%s", args, out)
		}
		if !strings.Contains(out, "kubectl sessions") {
			t.Errorf("%v: help does not say kubectl sessions:\n%s", args, out)
		}
	}
	out, _, _ := run(t, "--help")
	if !strings.Contains(out, "Exit codes:") {
		t.Errorf("root help documents no exit codes:\n%s", out)
	}
	out, _, _ = run(t, "policy", "explain", "--help")
	if !strings.Contains(out, "exits 0 when it printed a decision, allowed or denied") {
		t.Errorf("policy explain help documents no exit codes:\n%s", out)
	}
}

func TestErrorsArePrefixedOnce(t *testing.T) {
	_, stderr, code := run(t, "send", "only-a-key")
	if code != 1 || strings.Count(stderr, "error:") != 1 {
		t.Errorf("exit %d, stderr %q: want exit 1 and one error: prefix", code, stderr)
	}

	failed := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "send-x"},
		Status: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendError, Error: "the run failed: provider unreachable"}}
	_, err := sendOutcome(failed)
	var buf bytes.Buffer
	code = reportError(&buf, err)
	want := "error: sessionsend/send-x ended with status error: the run failed: provider unreachable\n"
	if code != 2 || buf.String() != want {
		t.Errorf("exit %d, printed %q; want exit 2 and %q", code, buf.String(), want)
	}
}

func TestSendOutcome(t *testing.T) {
	cases := map[string]struct {
		status   sessionsv1alpha1.SessionSendStatus
		want     string
		wantCode int
	}{
		"ok prints the reply": {status: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Reply: "pong"}, want: "pong"},
		"a cut reply says where the whole is": {status: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendOK, Reply: "pong…", ReplyTruncated: true, TargetSessionKey: "agent:bob:main"},
			want: "pong…\n(the reply is longer than the 8 KiB status keeps: kubectl sessions history agent:bob:main shows it whole)"},
		"accepted prints the receipt":   {status: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendAccepted, RunID: "r1"}, want: "accepted: sessionsend/s runId r1"},
		"timeout exits 2":               {status: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendTimeout, Error: "no reply in 30s"}, wantCode: 2},
		"error exits 2 with the reason": {status: sessionsv1alpha1.SessionSendStatus{Status: sessionsv1alpha1.SendError, Error: "boom"}, wantCode: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := sendOutcome(&sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Status: tc.status})
			if code := reportError(&bytes.Buffer{}, err); code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			if got != tc.want {
				t.Errorf("printed %q, want %q", got, tc.want)
			}
		})
	}
}
