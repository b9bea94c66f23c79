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
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A turn's owner is woken before its session's status is written: the write (a transcript
// read and an API call) is not on the path from the turn's end to the send's outcome.
func TestOwnerWokenBeforeSessionStatus(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	patching := make(chan struct{}, 1)
	f := mainFixture(t, func(o *Options) {
		o.Client = interceptor.NewClient(o.Client.(client.WithWatch), interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				patching <- struct{}{}
				<-release
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		})
	})
	t.Cleanup(unblock) // before the engine's Stop, which waits for the held write

	f.submit(turnReq("a", keyA, "ping"))
	woken := make(chan TurnResult, 1)
	go func() { woken <- f.await("a") }()
	select {
	case res := <-woken:
		if res.Err != nil || res.Text != "pong" {
			t.Errorf("result = %+v, want pong", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("owner not woken while the session's status write is held")
	}
	select {
	case <-patching:
	case <-time.After(30 * time.Second):
		t.Fatal("session status never written")
	}
	unblock()
	if got := f.settled(keyA).Status.MessageCount; got != 2 {
		t.Errorf("messageCount = %d, want 2 once the write goes through", got)
	}
}
