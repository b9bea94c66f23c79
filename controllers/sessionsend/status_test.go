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

package sessionsend

import (
	"testing"

	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The chaos suite found a fire-and-forget send ending "ok": its run finished while the API
// server was restarting, so its "accepted" write never landed.
func TestRepliedStatus(t *testing.T) {
	cases := map[string]struct {
		timeout *int32
		want    sessionsv1alpha1.SendStatus
	}{
		"fire-and-forget": {timeout: ptr.To[int32](0), want: sessionsv1alpha1.SendAccepted},
		"timed":           {timeout: ptr.To[int32](30), want: sessionsv1alpha1.SendOK},
		"default timeout": {want: sessionsv1alpha1.SendOK},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			send := &sessionsv1alpha1.SessionSend{Spec: sessionsv1alpha1.SessionSendSpec{TimeoutSeconds: tc.timeout}}
			if got := repliedStatus(send); got != tc.want {
				t.Errorf("repliedStatus = %q, want %q", got, tc.want)
			}
		})
	}
}
