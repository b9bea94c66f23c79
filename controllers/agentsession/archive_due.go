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
	"time"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// archiveDue reads a session's archive-at annotation: whether it is due at now, and if not,
// how long is left (0 when none is set or it does not parse).
func archiveDue(s *sessionsv1alpha1.AgentSession, now time.Time) (due bool, left time.Duration) {
	v, ok := s.Annotations[sessionsv1alpha1.ArchiveAtAnnotation]
	if !ok {
		return false, 0
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return false, 0
	}
	if left = at.Sub(now); left > 0 {
		return false, left
	}
	return true, 0
}
