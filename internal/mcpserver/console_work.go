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

package mcpserver

import (
	"context"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

// maxWork bounds how many sends and how many runs a session's work list shows: the newest.
const maxWork = 50

// sessionWork is what the console shows beside an opened session before the event stream
// brings changes: the sends into it and the runs it started, newest first.
type sessionWork struct {
	Sends []v1.SessionSend `json:"sends"`
	Runs  []v1.SubagentRun `json:"runs"`
}

// workOf lists key's sends and runs through the call's reader, as the caller.
func workOf(ctx context.Context, call *sessiontools.Call, key string) (*sessionWork, error) {
	var sends v1.SessionSendList
	if err := call.Reader.List(ctx, &sends, client.InNamespace(call.Namespace),
		client.MatchingFields{cacheindex.SendTarget: key}); err != nil {
		return nil, err
	}
	var runs v1.SubagentRunList
	if err := call.Reader.List(ctx, &runs, client.InNamespace(call.Namespace),
		client.MatchingFields{cacheindex.RunRequester: key}); err != nil {
		return nil, err
	}
	return &sessionWork{Sends: newest(sends.Items), Runs: newest(runs.Items)}, nil
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
