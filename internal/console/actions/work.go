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

package actions

import (
	"context"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// maxWork bounds how many sends and how many runs a session's work list shows: the newest.
// The runs under them (the run tree) are bounded alike, and followed maxTreeDepth levels.
const (
	maxWork      = 50
	maxTreeDepth = 5
)

// sessionWork is what the console shows beside an opened session before the event stream
// brings changes: the sends into it and the runs it started, newest first, and the runs
// under those (Descendants: a run's children are the runs its child session requested).
type sessionWork struct {
	Sends       []sessionsv1alpha1.SessionSend `json:"sends"`
	Runs        []sessionsv1alpha1.SubagentRun `json:"runs"`
	Descendants []sessionsv1alpha1.SubagentRun `json:"descendants"`
}

// pageSize bounds one read of a work list: a session with 100,000 finished sends is read a
// page at a time from the API server, keeping only the newest maxWork.
const pageSize = 500

// workOf lists key's sends and runs through the call's reader, as the caller: the sends
// resolved to key and those that name it as written (not resolved yet, or by an alias).
func workOf(ctx context.Context, call *sessiontools.Call, key string) (*sessionWork, error) {
	var sends []sessionsv1alpha1.SessionSend
	for _, field := range []string{cacheindex.SendTarget, cacheindex.SendKey} {
		var list sessionsv1alpha1.SessionSendList
		page, err := listNewest(ctx, call.Reader, &list, func() []sessionsv1alpha1.SessionSend { return list.Items },
			client.InNamespace(call.Namespace), client.MatchingFields{field: key})
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			if !slices.ContainsFunc(sends, func(o sessionsv1alpha1.SessionSend) bool { return o.UID == s.UID && o.Name == s.Name }) {
				sends = append(sends, s)
			}
		}
	}
	runs, err := runsOf(ctx, call, key)
	if err != nil {
		return nil, err
	}
	below, err := descendantsOf(ctx, call, key, runs)
	if err != nil {
		return nil, err
	}
	return &sessionWork{Sends: newest(sends), Runs: runs, Descendants: below}, nil
}

// runsOf are the newest runs key requested.
func runsOf(ctx context.Context, call *sessiontools.Call, key string) ([]sessionsv1alpha1.SubagentRun, error) {
	var list sessionsv1alpha1.SubagentRunList
	return listNewest(ctx, call.Reader, &list, func() []sessionsv1alpha1.SubagentRun { return list.Items },
		client.InNamespace(call.Namespace), client.MatchingFields{cacheindex.RunRequester: key})
}

// listNewest reads list a page at a time (items is the page just read) and keeps the newest
// maxWork objects.
func listNewest[T any, P interface {
	*T
	client.Object
}](ctx context.Context, r client.Reader, list client.ObjectList, items func() []T, opts ...client.ListOption) ([]T, error) {
	var out []T
	for cont := ""; ; {
		if err := r.List(ctx, list, append(opts, client.Limit(pageSize), client.Continue(cont))...); err != nil {
			return nil, err
		}
		out = newest[T, P](append(out, items()...))
		if cont = list.GetContinue(); cont == "" {
			return out, nil
		}
	}
}

// descendantsOf walks the run tree under runs level by level: the runs each run's child
// session requested, then theirs. A session seen before (key's own, or a cycle) is not
// followed again.
func descendantsOf(ctx context.Context, call *sessiontools.Call, key string, runs []sessionsv1alpha1.SubagentRun) ([]sessionsv1alpha1.SubagentRun, error) {
	var out []sessionsv1alpha1.SubagentRun
	seen := map[string]bool{key: true}
	for depth := 0; depth < maxTreeDepth && len(runs) > 0 && len(out) < maxWork; depth++ {
		var next []sessionsv1alpha1.SubagentRun
		for _, r := range runs {
			child := r.Status.ChildSessionKey
			if child == "" || seen[child] {
				continue
			}
			seen[child] = true
			children, err := runsOf(ctx, call, child)
			if err != nil {
				return nil, err
			}
			next = append(next, children...)
		}
		out = append(out, next...)
		runs = next
	}
	if len(out) > maxWork {
		out = out[:maxWork]
	}
	return out, nil
}

// newest sorts objects newest first and keeps maxWork of them.
func newest[T any, P interface {
	*T
	client.Object
}](items []T) []T {
	slices.SortFunc(items, func(a, b T) int {
		ta, tb := P(&a).GetCreationTimestamp(), P(&b).GetCreationTimestamp()
		if c := tb.Compare(ta.Time); c != 0 {
			return c
		}
		return strings.Compare(P(&b).GetName(), P(&a).GetName())
	})
	if len(items) > maxWork {
		items = items[:maxWork]
	}
	return items
}
