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

package events

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// followRetry is the pause before a watch that ended (its resourceVersion expired, or the
// API server was unreachable) starts again from the current state.
const followRetry = time.Second

// follow passes each change of the objects newList lists, in every namespace, to publish
// until ctx is done, keeping none of them: a watch from the current resourceVersion that
// resumes where it broke off (client-go's RetryWatcher) and starts over from a fresh one
// when that is gone. Changes made while it starts over are not published; a subscriber
// that must not miss one reads the object itself.
func follow(ctx context.Context, w client.WithWatch, newList func() client.ObjectList, sel labels.Selector, publish func(ObjectChange)) {
	for ctx.Err() == nil {
		followOnce(ctx, w, newList, sel, publish)
		select {
		case <-ctx.Done():
		case <-time.After(followRetry):
		}
	}
}

func followOnce(ctx context.Context, w client.WithWatch, newList func() client.ObjectList, sel labels.Selector, publish func(ObjectChange)) {
	head := newList()
	if err := w.List(ctx, head, client.Limit(1), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, head.GetResourceVersion(), &toolscache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return w.Watch(ctx, newList(), &client.ListOptions{Raw: &o, LabelSelector: sel})
		}})
	if err != nil {
		return
	}
	defer rw.Stop()
	for ev := range rw.ResultChan() {
		obj, ok := ev.Object.(client.Object)
		if !ok {
			continue
		}
		switch ev.Type {
		case watch.Added:
			publish(ObjectChange{Cur: obj})
		case watch.Modified:
			publish(ObjectChange{Old: obj, Cur: obj})
		case watch.Deleted:
			publish(ObjectChange{Old: obj})
		}
	}
}
