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

package transcriptstore

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// The door counts what it accepts until the SessionHook controller acknowledges what it
// wrote: deliveries that came meanwhile stay pending, an acknowledged hook is forgotten.
func TestHookDeliveryTally(t *testing.T) {
	k := NewHookKeyring()
	ci := types.NamespacedName{Namespace: "ns", Name: "ci"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k.accepted(ci, t0)
	k.accepted(ci, t0.Add(time.Minute))
	k.accepted(ci, t0.Add(-time.Minute)) // out of order: the latest time stays
	if diff := cmp.Diff(transcript.HookDelivery{Namespace: "ns", Name: "ci", Count: 3, Last: t0.Add(time.Minute)}, k.pending(ci)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	k.acknowledge(ci, 2)
	k.accepted(ci, t0.Add(2*time.Minute))
	if got := k.pending(ci); got.Count != 2 || !got.Last.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("after acknowledging 2 and one more: %+v, want 2", got)
	}
	k.acknowledge(ci, 2)
	if _, kept := k.tally[ci]; kept {
		t.Error("an acknowledged hook is still kept")
	}
	if got := k.pending(types.NamespacedName{Namespace: "ns", Name: "none"}); got.Count != 0 || got.Name != "none" {
		t.Errorf("a hook without deliveries: %+v", got)
	}
}
