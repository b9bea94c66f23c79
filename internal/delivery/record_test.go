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

package delivery

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The events kind records announces without a URL; a repeated announce is recorded once.
func TestDeliverToRecord(t *testing.T) {
	var got []Message
	sink := Sink{Record: func(m Message) { got = append(got, m) }}
	d := New(nil)
	m := Message{Namespace: "ns", SessionKey: "agent:main:main", Channel: "webchat", Text: "done", IdempotencyKey: "uid/announce"}
	for range 2 {
		if err := d.Deliver(context.Background(), sink, m); err != nil {
			t.Fatalf("Deliver: %v", err)
		}
	}
	if diff := cmp.Diff([]Message{m}, got); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}
