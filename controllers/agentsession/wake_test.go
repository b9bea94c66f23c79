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
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/controllers/ownerflow/ownerflowtest"
)

// A busy session's reports within the interval are one item of the work queue: one status
// write for all of them, where status_throttle.go used to coalesce them.
func TestReportWakesGatherInTheQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(ownerflowtest.Epoch)
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request](),
		workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Clock: clk})
	defer q.ShutDown()
	h := reportWake(time.Second)
	wake := func(name string) {
		h.Generic(context.Background(), event.GenericEvent{Object: &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}}, q)
	}
	for range 5 {
		wake("busy")
	}
	wake("other")
	if n := q.Len(); n != 0 {
		t.Fatalf("queue length before the interval = %d, want 0", n)
	}
	// The delaying queue's goroutine moves due items; give it the fake clock's step.
	deadline := time.Now().Add(30 * time.Second)
	for q.Len() < 2 && time.Now().Before(deadline) {
		clk.Step(time.Second)
		time.Sleep(time.Millisecond)
	}
	if n := q.Len(); n != 2 {
		t.Errorf("queue length after the interval = %d, want 2 (one per session)", n)
	}
}
