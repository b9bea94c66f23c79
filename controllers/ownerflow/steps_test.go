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

package ownerflow

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The kinds share their status through sessionsv1alpha1.OwnerStatus: the runner asks a kind only for what
// differs (steps, progress, phase, afterFinish), not for copied accessors.
func TestOwnerKindIsSmall(t *testing.T) {
	if n := reflect.TypeFor[OwnerKind[*sessionsv1alpha1.SessionSend]]().NumMethod(); n > 4 {
		t.Errorf("ownerKind has %d methods, want at most 4", n)
	}
	send := &sessionsv1alpha1.SessionSend{}
	send.GetOwnerStatus().CompletedAt = &metav1.Time{Time: epoch}
	if !send.Status.Finished() || send.Status.CompletedAt == nil {
		t.Error("the shared status is not the send's status")
	}
}
