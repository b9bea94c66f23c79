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

package a2aserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// LabelCaller marks the sends the A2A server made with the caller that asked
// (caller.TaskOwner). A task belongs to the client that sent it: ListTasks lists the
// caller's own, and GetTask, CancelTask and SubscribeToTask find only those.
const LabelCaller = "a2a.sessions.agents.dev/caller"

// Page sizes of ListTasks: the default when the client names none, and the most one page holds.
const (
	defaultPageSize = 50
	maxPageSize     = 100
)

// CallerLabel is the label value of a user (caller.TaskOwner).
func CallerLabel(user string) string { return caller.TaskOwner(user) }

// ListTasks lists the tasks this caller sent to this agent, newest first, filtered by
// context, state and status time, a page at a time; a task whose session's transcript the
// caller may no longer read is not listed.
func (h *agentHandler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	if req == nil {
		return nil, a2a.ErrInvalidParams
	}
	size := req.PageSize
	switch {
	case size < 0 || size > maxPageSize:
		return nil, fmt.Errorf("%w: pageSize must be 1 to %d", a2a.ErrInvalidParams, maxPageSize)
	case size == 0:
		size = defaultPageSize
	}
	after, err := parsePageToken(req.PageToken)
	if err != nil {
		return nil, err
	}
	var list sessionsv1alpha1.SessionSendList
	err = h.call.Client.List(ctx, &list, client.InNamespace(h.call.Namespace),
		client.MatchingLabels{LabelAgent: h.agent.Name, LabelCaller: CallerLabel(h.user)})
	if apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("%w: %s", a2a.ErrUnauthorized, err.Error())
	}
	if err != nil {
		return nil, protocolError(err)
	}
	sends := list.Items
	slices.SortFunc(sends, func(a, b sessionsv1alpha1.SessionSend) int { return comparePage(pageKeyOf(&b), pageKeyOf(&a)) })
	readable := map[string]bool{}
	resp := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}, PageSize: size}
	var last pageKey
	for i := range sends {
		s := &sends[i]
		t := taskOf(s)
		if !listed(req, s, t) {
			continue
		}
		ok, err := h.mayRead(ctx, s, readable)
		if err != nil {
			return nil, protocolError(err)
		}
		if !ok {
			continue
		}
		resp.TotalSize++
		key := pageKeyOf(s)
		if after != nil && comparePage(key, *after) >= 0 {
			continue
		}
		if len(resp.Tasks) == size {
			resp.NextPageToken = pageToken(last)
			continue
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		} else if t, err = h.wholeTask(ctx, s); err != nil {
			return nil, err
		}
		resp.Tasks, last = append(resp.Tasks, t), key
	}
	return resp, nil
}

// listed says whether a task passes the request's filters.
func listed(req *a2a.ListTasksRequest, s *sessionsv1alpha1.SessionSend, t *a2a.Task) bool {
	if req.ContextID != "" && contextOf(s) != req.ContextID {
		return false
	}
	if knownState(req.Status) && t.Status.State != req.Status {
		return false
	}
	if at := req.StatusTimestampAfter; at != nil && !statusTime(s).After(*at) {
		return false
	}
	return true
}

// knownState says s names a task state: a filter on any other (@a2a-js/sdk 1.3's JSON-RPC
// client sends "UNRECOGNIZED" when it filters on none) filters nothing.
func knownState(s a2a.TaskState) bool {
	switch s {
	case a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled,
		a2a.TaskStateInputRequired, a2a.TaskStateRejected, a2a.TaskStateAuthRequired:
		return true
	}
	return false
}

// statusTime is when the task's state last changed, as far as the send says: its end, its
// start, or its creation.
func statusTime(s *sessionsv1alpha1.SessionSend) time.Time {
	switch {
	case s.Status.CompletedAt != nil:
		return s.Status.CompletedAt.Time
	case s.Status.StartedAt != nil:
		return s.Status.StartedAt.Time
	}
	return s.CreationTimestamp.Time
}

// mayRead says whether the caller may read the transcript of the send's session, asking
// the access layer once per session of the request.
func (h *agentHandler) mayRead(ctx context.Context, s *sessionsv1alpha1.SessionSend, asked map[string]bool) (bool, error) {
	name := sessionkey.ObjectName(s.TargetRef())
	if ok, seen := asked[name]; seen {
		return ok, nil
	}
	err := h.call.Access(ctx, caller.ReadTranscript, name)
	if err != nil && !apierrors.IsForbidden(err) {
		return false, err
	}
	asked[name] = err == nil
	return err == nil, nil
}

// pageKey orders tasks newest first: by creation time, then by name.
type pageKey struct {
	created time.Time
	name    string
}

func pageKeyOf(s *sessionsv1alpha1.SessionSend) pageKey {
	return pageKey{created: s.CreationTimestamp.Time, name: s.Name}
}

// comparePage orders keys oldest first; a page lists in the reverse order.
func comparePage(a, b pageKey) int {
	if c := a.created.Compare(b.created); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// pageToken is the opaque token of the page after key: its time and name.
func pageToken(key pageKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key.created.UTC().Format(time.RFC3339) + "|" + key.name))
}

// parsePageToken reads a token pageToken made; an empty one is the first page (nil).
func parsePageToken(token string) (*pageKey, error) {
	if token == "" {
		return nil, nil
	}
	bad := fmt.Errorf("%w: pageToken is not one this server made", a2a.ErrInvalidParams)
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return nil, bad
	}
	at, name, ok := strings.Cut(string(b), "|")
	t, err := time.Parse(time.RFC3339, at)
	if !ok || err != nil || name == "" {
		return nil, bad
	}
	return &pageKey{created: t, name: name}, nil
}
