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

package sandbox

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// changes wakes the waits of Acquire when a claim or its Sandbox changes in the manager's
// informer cache: a turn waiting for its sandbox sleeps until agent-sandbox's controller
// writes something, and reads the cache the event came from.
type changes struct {
	mu      sync.Mutex
	waiters map[types.NamespacedName]map[chan struct{}]struct{} // by claim
}

func newChanges() *changes {
	return &changes{waiters: map[types.NamespacedName]map[chan struct{}]struct{}{}}
}

// watch registers the handlers on the informers of claims and Sandboxes (informers are
// shared with the controllers that watch them already).
func (w *changes) watch(ctx context.Context, informers cache.Informers) error {
	for _, obj := range []client.Object{&sandboxextv1beta1.SandboxClaim{}, &sandboxv1beta1.Sandbox{}} {
		inf, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    w.notify,
			UpdateFunc: func(_, obj any) { w.notify(obj) },
			DeleteFunc: w.notify,
		}); err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
	}
	return nil
}

// notify wakes the waits on the claim obj is (a SandboxClaim) or belongs to (a Sandbox
// names its claim as controller; a Sandbox started cold has the claim's name).
func (w *changes) notify(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	keys := []types.NamespacedName{{Namespace: o.GetNamespace(), Name: o.GetName()}}
	if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "SandboxClaim" && ref.Name != o.GetName() {
		keys = append(keys, types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		for ch := range w.waiters[k] {
			select {
			case ch <- struct{}{}:
			default: // a wake-up is pending already
			}
		}
	}
}

// subscribe returns a channel that receives when the claim or its Sandbox changes, and the
// function that ends the subscription. Subscribe before looking, so no change is missed.
func (w *changes) subscribe(claim types.NamespacedName) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	if w.waiters[claim] == nil {
		w.waiters[claim] = map[chan struct{}]struct{}{}
	}
	w.waiters[claim][ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.waiters[claim], ch)
		if len(w.waiters[claim]) == 0 {
			delete(w.waiters, claim)
		}
	}
}
