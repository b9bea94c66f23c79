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
)

// fairShare bounds running turns globally and per namespace, so that one namespace full of
// slow turns cannot hold every slot of a manager shared between teams. A turn first takes a
// slot of its namespace, then a global one: a namespace's excess turns wait behind their own
// namespace, never in front of another's.
type fairShare struct {
	global chan struct{}
	perNS  int

	mu sync.Mutex
	ns map[string]*nsSlots
}

// nsSlots is one namespace's semaphore; it exists while a turn of the namespace holds or
// waits for a slot, so the map is bounded by the namespaces with work.
type nsSlots struct {
	sem   chan struct{}
	users int
}

// newFairShare bounds turns to total at once and to perNamespace in any one namespace
// (perNamespace <= 0 or > total means total).
func newFairShare(total, perNamespace int) *fairShare {
	if perNamespace <= 0 || perNamespace > total {
		perNamespace = total
	}
	return &fairShare{global: make(chan struct{}, total), perNS: perNamespace, ns: map[string]*nsSlots{}}
}

// acquire waits for a slot of namespace and a global one; it returns the release func, or
// ctx's error when ctx ends first (nothing is then held).
func (f *fairShare) acquire(ctx context.Context, namespace string) (func(), error) {
	s := f.join(namespace)
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		f.leave(namespace, s)
		return nil, ctx.Err()
	}
	select {
	case f.global <- struct{}{}:
	case <-ctx.Done():
		<-s.sem
		f.leave(namespace, s)
		return nil, ctx.Err()
	}
	return func() {
		<-f.global
		<-s.sem
		f.leave(namespace, s)
	}, nil
}

func (f *fairShare) join(namespace string) *nsSlots {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.ns[namespace]
	if !ok {
		s = &nsSlots{sem: make(chan struct{}, f.perNS)}
		f.ns[namespace] = s
	}
	s.users++
	return s
}

func (f *fairShare) leave(namespace string, s *nsSlots) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(f.ns, namespace)
	}
}

// namespaces is how many namespaces hold or wait for slots (for tests and metrics).
func (f *fairShare) namespaces() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ns)
}
