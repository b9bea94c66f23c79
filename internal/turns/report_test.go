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
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// The engine writes no status: a turn (and an aborted one) reports to the session's
// controller, which it wakes after the turn's owner, and the report stays until the
// controller says it is written, unless a newer one came meanwhile.
func TestTurnsReportAndWriteNoStatus(t *testing.T) {
	f := mainFixture(t, func(o *Options) {
		fail := func(sub string) {
			t.Errorf("the engine wrote the %s subresource", sub)
		}
		o.Client = interceptor.NewClient(o.Client.(client.WithWatch), interceptor.Funcs{
			SubResourceCreate: func(_ context.Context, _ client.Client, sub string, _, _ client.Object, _ ...client.SubResourceCreateOption) error {
				fail(sub)
				return nil
			},
			SubResourceUpdate: func(_ context.Context, _ client.Client, sub string, _ client.Object, _ ...client.SubResourceUpdateOption) error {
				fail(sub)
				return nil
			},
			SubResourcePatch: func(_ context.Context, _ client.Client, sub string, _ client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
				fail(sub)
				return nil
			},
		})
	})
	sessions := f.engine.Wake(WakeAgentSession)
	f.submit(turnReq("a", keyA, "ping"))
	if res := f.await("a"); res.Err != nil || res.Text != "pong" {
		t.Fatalf("result = %+v, want pong", res)
	}
	ev := <-sessions
	key := types.NamespacedName{Namespace: ns, Name: sessionkey.ObjectName(keyA)}
	if got := (types.NamespacedName{Namespace: ev.Object.GetNamespace(), Name: ev.Object.GetName()}); got != key {
		t.Fatalf("woke session %v, want %v", got, key)
	}
	first, ok := f.engine.SessionReport(key)
	if !ok || !first.TurnEnded || first.AbortedLastRun || first.ContextTokens == 0 {
		t.Fatalf("report = %+v, %v; want an ended turn with its context size", first, ok)
	}

	// A second turn ends before the controller's write of the first report lands: the
	// write's acknowledgement must not forget the newer report.
	f.submit(turnReq("b", keyA, "ping"))
	f.await("b")
	f.settled(keyA)
	f.engine.ReportWritten(key, first.Seq)
	second, ok := f.engine.SessionReport(key)
	if !ok || second.Seq == first.Seq {
		t.Fatalf("report after a stale acknowledgement = %+v, %v; want the second turn's", second, ok)
	}
	f.engine.ReportWritten(key, second.Seq)
	if r, ok := f.engine.SessionReport(key); ok {
		t.Errorf("report after its write = %+v, want none held", r)
	}
	if got := f.session(keyA).Status; got.MessageCount != 0 || got.ContextTokens != 0 {
		t.Errorf("session status = %+v, want untouched by the engine", got)
	}
}
