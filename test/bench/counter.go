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

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// counter records when each object of one resource first met a condition, from a watch
// (of one namespace, or all when empty) that resumes where it broke off.
type counter struct {
	mu   sync.Mutex
	seen map[string]time.Time // namespace/name
	cond *sync.Cond
}

func countWhere(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace string,
	met func(*unstructured.Unstructured) bool) (*counter, error) {
	res := dyn.Resource(gvr).Namespace(namespace)
	list, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, o)
		}})
	if err != nil {
		return nil, err
	}
	c := &counter{seen: map[string]time.Time{}}
	c.cond = sync.NewCond(&c.mu)
	go func() {
		for ev := range rw.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || !met(u) {
				continue
			}
			key := u.GetNamespace() + "/" + u.GetName()
			c.mu.Lock()
			if _, dup := c.seen[key]; !dup {
				c.seen[key] = time.Now()
				c.cond.Broadcast()
			}
			c.mu.Unlock()
		}
	}()
	return c, nil
}

// statusSet is a countWhere condition: the object's status.<field> is a non-empty string
// (a session's sessionId once initialized, an owner's completedAt once finished).
func statusSet(field string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		v, _, _ := unstructured.NestedString(u.Object, "status", field)
		return v != ""
	}
}

// wait blocks until n objects have met the condition, or returns an error after timeout.
func (c *counter) wait(n int, timeout time.Duration) error {
	if !c.until(func() bool { return len(c.seen) >= n }, timeout) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return fmt.Errorf("%d of %d after %s", len(c.seen), n, timeout)
	}
	return nil
}

// at is when namespace/name met the condition, and whether it has.
func (c *counter) at(key string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.seen[key]
	return t, ok
}

// waitKey blocks until namespace/name has met the condition, or returns false after timeout.
func (c *counter) waitKey(key string, timeout time.Duration) bool {
	return c.until(func() bool { _, ok := c.seen[key]; return ok }, timeout)
}

// until waits, holding c.mu while it checks, for done to hold; false after timeout.
func (c *counter) until(done func() bool, timeout time.Duration) bool {
	timer := time.AfterFunc(timeout, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(timeout)
	c.mu.Lock()
	defer c.mu.Unlock()
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		c.cond.Wait()
	}
	return true
}
