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

package policy

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestCancelOnly(t *testing.T) {
	send := sessionsv1alpha1.SessionSendSpec{SessionKey: "agent:a:main", Message: "hi", TimeoutSeconds: ptr.To[int32](30)}
	run := sessionsv1alpha1.SubagentRunSpec{Task: "t", AgentID: "a", Attachments: []sessionsv1alpha1.Attachment{{Name: "f", Content: "x"}}}
	sendCases := map[string]struct {
		change func(*sessionsv1alpha1.SessionSendSpec)
		want   string // the refusal's field path, "" to allow
	}{
		"no change":           {change: func(*sessionsv1alpha1.SessionSendSpec) {}},
		"cancel":              {change: func(s *sessionsv1alpha1.SessionSendSpec) { s.Cancel = true }},
		"message":             {change: func(s *sessionsv1alpha1.SessionSendSpec) { s.Message = "other" }, want: "spec"},
		"timeout":             {change: func(s *sessionsv1alpha1.SessionSendSpec) { s.TimeoutSeconds = ptr.To[int32](0) }, want: "spec"},
		"cancel and message":  {change: func(s *sessionsv1alpha1.SessionSendSpec) { s.Cancel, s.Message = true, "other" }, want: "spec"},
		"a requester set now": {change: func(s *sessionsv1alpha1.SessionSendSpec) { s.FromSessionKey = "agent:b:main" }, want: "spec"},
	}
	for name, tc := range sendCases {
		t.Run("send/"+name, func(t *testing.T) {
			cur := send
			tc.change(&cur)
			if got := fieldOf(CancelOnlySend(send, cur)); got != tc.want {
				t.Errorf("refused at %q, want %q", got, tc.want)
			}
		})
	}
	cancelled := run
	cancelled.Cancel = true
	runCases := map[string]struct {
		old    sessionsv1alpha1.SubagentRunSpec
		change func(*sessionsv1alpha1.SubagentRunSpec)
		want   string
	}{
		"cancel":       {old: run, change: func(s *sessionsv1alpha1.SubagentRunSpec) { s.Cancel = true }},
		"cancel again": {old: cancelled, change: func(*sessionsv1alpha1.SubagentRunSpec) {}},
		"uncancel":     {old: cancelled, change: func(s *sessionsv1alpha1.SubagentRunSpec) { s.Cancel = false }, want: "spec.cancel"},
		"task":         {old: run, change: func(s *sessionsv1alpha1.SubagentRunSpec) { s.Task = "other" }, want: "spec"},
		"thinking":     {old: run, change: func(s *sessionsv1alpha1.SubagentRunSpec) { s.Thinking = "high" }, want: "spec"},
		"attachment content": {old: run, change: func(s *sessionsv1alpha1.SubagentRunSpec) {
			s.Attachments = []sessionsv1alpha1.Attachment{{Name: "f", Content: "y"}}
		}, want: "spec"},
	}
	for name, tc := range runCases {
		t.Run("run/"+name, func(t *testing.T) {
			cur := tc.old
			cur.Attachments = append([]sessionsv1alpha1.Attachment(nil), tc.old.Attachments...)
			tc.change(&cur)
			if got := fieldOf(CancelOnlyRun(tc.old, cur)); got != tc.want {
				t.Errorf("refused at %q, want %q", got, tc.want)
			}
		})
	}
}

// fieldOf is where a refusal points, "" for none.
func fieldOf(err *field.Error) string {
	if err == nil {
		return ""
	}
	return err.Field
}
