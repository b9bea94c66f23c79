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

package agentsession

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
)

func TestArchiveDue(t *testing.T) {
	s := func(v string) *sessionsv1alpha1.AgentSession {
		return &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{sessionsv1alpha1.ArchiveAtAnnotation: v}}}
	}
	cases := map[string]struct {
		s        *sessionsv1alpha1.AgentSession
		wantDue  bool
		wantLeft time.Duration
	}{
		"none":        {s: &sessionsv1alpha1.AgentSession{}},
		"not yet":     {s: s(ownerflowtest.Epoch.Add(time.Hour).Format(time.RFC3339)), wantLeft: time.Hour},
		"due":         {s: s(ownerflowtest.Epoch.Format(time.RFC3339)), wantDue: true},
		"unparseable": {s: s("soon")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			due, left := archiveDue(tc.s, ownerflowtest.Epoch)
			if due != tc.wantDue || left != tc.wantLeft {
				t.Errorf("archiveDue = %v, %s; want %v, %s", due, left, tc.wantDue, tc.wantLeft)
			}
		})
	}
}
