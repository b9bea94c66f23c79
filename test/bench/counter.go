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
// (of one namespace, or all when empty) that resumes where it broke off, and from a fresh
// list when the API server no longer serves where it broke off or rewatch asks.
type counter struct {
	mu          sync.Mutex
	seen        map[string]time.Time // namespace/name
	cond        *sync.Cond
	cancelWatch context.CancelFunc // ends the current watch
}

func countWhere(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace string,
	met func(*unstructured.Unstructured) bool) (*counter, error) {
	res := dyn.Resource(gvr).Namespace(namespace)
	list, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	c := &counter{seen: map[string]time.Time{}}
	c.cond = sync.NewCond(&c.mu)
	rv := list.GetResourceVersion()
	go func() {
		for ctx.Err() == nil {
			wctx, cancel := context.WithCancel(ctx)
			c.mu.Lock()
			c.cancelWatch = cancel
			c.mu.Unlock()
			if rv == "" {
				var err error
				if rv, err = c.relist(wctx, res, met); err != nil {
					cancel()
					time.Sleep(time.Second)
					continue
				}
			}
			c.follow(wctx, res, rv, met)
			cancel()
			rv = ""
		}
	}()
	return c, nil
}

// rewatch ends the counter's watch: it lists again and watches from there. A watch that
// resumed on a restarted API server from the old server's resource version was seen to
// miss events (two unit-sized runs of the suite in three stalled), so the suite calls this
// after a restart rather than trust the resume.
func (c *counter) rewatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancelWatch != nil {
		c.cancelWatch()
	}
}

// follow counts the watch's events from rv until the watch gives up: the context ends, or
// the API server answers that rv has gone.
func (c *counter) follow(ctx context.Context, res dynamic.ResourceInterface, rv string, met func(*unstructured.Unstructured) bool) {
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return res.Watch(ctx, o)
		}})
	if err != nil {
		return
	}
	defer rw.Stop()
	for ev := range rw.ResultChan() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			c.note(u, met)
		}
	}
}

// relist counts the objects that meet the condition now and returns the list's resource
// version to watch from. What met it and went while no watch ran is not counted: the suite
// restarts its API server only when it waits on nothing.
func (c *counter) relist(ctx context.Context, res dynamic.ResourceInterface, met func(*unstructured.Unstructured) bool) (string, error) {
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := res.List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			c.note(&list.Items[i], met)
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return list.GetResourceVersion(), nil
		}
	}
}

// note records u when it meets the condition for the first time.
func (c *counter) note(u *unstructured.Unstructured, met func(*unstructured.Unstructured) bool) {
	if !met(u) {
		return
	}
	key := u.GetNamespace() + "/" + u.GetName()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.seen[key]; !dup {
		c.seen[key] = time.Now()
		c.cond.Broadcast()
	}
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
