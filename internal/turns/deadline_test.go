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

package turns

import (
	"errors"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

func TestTurnTimeout(t *testing.T) {
	cases := map[string]struct {
		seconds *int32
		want    time.Duration
	}{
		"unset": {nil, DefaultTurnTimeout},
		"zero":  {ptr.To[int32](0), DefaultTurnTimeout},
		"set":   {ptr.To[int32](90), 90 * time.Second},
		"a day": {ptr.To[int32](86400), 24 * time.Hour},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := &sessionsv1alpha1.Agent{Spec: sessionsv1alpha1.AgentSpec{TurnTimeoutSeconds: tc.seconds}}
			if got := turnTimeout(a); got != tc.want {
				t.Errorf("turnTimeout = %v, want %v", got, tc.want)
			}
		})
	}
}

// A model that never answers in time: the turn ends at its agent's turnTimeoutSeconds with
// ErrDeadline, and its slot and lane are free again.
func TestTurnDeadline(t *testing.T) {
	agent := scriptedAgent("main", slowRule("^slow", "done", time.Hour), rule("^ping", "pong"))
	agent.Spec.TurnTimeoutSeconds = ptr.To[int32](60)
	f := newFixture(t, []client.Object{agent, session(keyA, "main", sidA)}, maxConcurrent(1))
	f.submit(turnReq("a", keyA, "slow"))
	f.waitTimers(2) // the turn's deadline and the model's delay
	f.clock.Step(time.Minute)
	if res := f.await("a"); !errors.Is(res.Err, ErrDeadline) || !res.Aborted {
		t.Fatalf("turn a = %+v, want aborted with ErrDeadline", res)
	}
	f.submit(turnReq("b", keyA, "ping"))
	if res := f.await("b"); res.Text != "pong" {
		t.Fatalf("turn b after the deadline = %+v", res)
	}
}
