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

package controllers

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// The schedule gives up sends in due order, only once due, skips what is kept or belongs to
// another shard.
func TestSendTTLSchedule(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	finished := func(name, ns string, ttl *int32, ago time.Duration) *v1.SessionSend {
		at := metav1.NewTime(epoch.Add(-ago))
		return &v1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(name)},
			Spec: v1.SessionSendSpec{TTLSecondsAfterFinished: ttl}, Status: v1.SessionSendStatus{CompletedAt: &at}}
	}
	ttl := newSendTTL(nil, nil, clk, time.Hour, func(ns string) bool { return ns != "other-shard" })
	ttl.schedule(finished("default-ttl", "team", nil, 0))                   // due in 1h
	ttl.schedule(finished("own-ttl", "team", ptr.To[int32](60), 0))         // due in 1m
	ttl.schedule(finished("overdue", "team", ptr.To[int32](60), time.Hour)) // due now
	ttl.schedule(finished("at-once", "team", ptr.To[int32](0), 0))          // 0: at once
	ttl.schedule(finished("elsewhere", "other-shard", ptr.To[int32](0), 0)) // not this shard's
	keep := newSendTTL(nil, nil, clk, 0, func(string) bool { return true }) // --ttl-after-finished=0
	keep.schedule(finished("forever", "team", nil, time.Hour))

	popAll := func() []string {
		var out []string
		for item, ok := ttl.popDue(); ok; item, ok = ttl.popDue() {
			out = append(out, item.Name)
		}
		return out
	}
	if got := popAll(); !slices.Equal(got, []string{"overdue", "at-once"}) {
		t.Fatalf("due at once = %v, want [overdue at-once]", got)
	}
	clk.Step(time.Minute)
	if got := popAll(); len(got) != 1 || got[0] != "own-ttl" {
		t.Fatalf("due after 1m = %v, want own-ttl", got)
	}
	clk.Step(time.Hour)
	if got := popAll(); len(got) != 1 || got[0] != "default-ttl" {
		t.Fatalf("due after 1h1m = %v, want default-ttl", got)
	}
	if _, ok := keep.popDue(); ok || keep.due.Len() != 0 {
		t.Fatal("a send without a TTL under --ttl-after-finished=0 was scheduled")
	}
}

// A scheduled send's UID comes back as it was given: a UUID (what the API server makes) from
// its 16 bytes, anything else as it was.
func TestTTLItemKeepsTheUID(t *testing.T) {
	for _, uid := range []types.UID{"0b6f9a3e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "not-a-uuid", "0B6F9A3E-1C2D-4E5F-8A9B-0C1D2E3F4A5B", "00000000-0000-0000-0000-000000000000", ""} {
		if got := newTTLItem("ns", "s", uid, epoch).UID(); got != uid {
			t.Errorf("UID %q came back as %q", uid, got)
		}
	}
}
