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

package sessiontools

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/sessionrows"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// A retired session is an archived one whose object the SessionPolicy's retention deleted;
// the transcript store keeps its record (transcript.RetiredSession) and its archived
// transcript. The tools see it as the archived session it was, through the same visibility
// and access rules as a live one: listed with archived, its history read, and restore
// recreates its object (the AgentSession controller adopts the transcript).

// retiredRecords are the namespace's retired sessions' records q keeps, for a caller that
// may list the namespace's sessions.
func (c *Call) retiredRecords(ctx context.Context, q transcript.RetiredQuery) ([]transcript.RetiredSession, error) {
	if c.Retired == nil {
		return nil, nil
	}
	if err := c.may(ctx, caller.ListSessions, ""); err != nil {
		if apierrors.IsForbidden(err) {
			return nil, nil
		}
		return nil, err
	}
	return c.Retired.RetiredSessions(ctx, c.Namespace, q)
}

// asArchived are recs as archived AgentSessions, but for those a live object has the
// sessionId of.
func asArchived(recs []transcript.RetiredSession, live []*sessionsv1alpha1.AgentSession) []*sessionsv1alpha1.AgentSession {
	ids := make(map[string]struct{}, len(live))
	for _, s := range live {
		ids[s.Status.SessionID] = struct{}{}
	}
	out := make([]*sessionsv1alpha1.AgentSession, 0, len(recs))
	for i := range recs {
		if _, ok := ids[recs[i].SessionID]; !ok {
			out = append(out, sessionOfRecord(&recs[i]))
		}
	}
	return out
}

// sessionOfRecord is a retired session as the archived AgentSession it was, for the tools'
// rows, visibility and access checks; it is never written.
func sessionOfRecord(r *transcript.RetiredSession) *sessionsv1alpha1.AgentSession {
	s := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, CreationTimestamp: metav1.NewTime(r.CreatedAt)},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: r.Key, AgentID: r.AgentID, ChatType: sessionsv1alpha1.ChatType(r.ChatType),
			DisplayName: r.DisplayName, Label: r.Label, SpawnedBy: r.SpawnedBy, ParentSessionKey: r.ParentSessionKey, Sandboxed: r.Sandboxed},
		Status: sessionsv1alpha1.AgentSessionStatus{SessionID: r.SessionID, Kind: sessionsv1alpha1.SessionKind(r.Kind), Channel: r.Channel,
			Phase: sessionsv1alpha1.SessionArchived, MessageCount: r.MessageCount, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			TotalTokens: r.TotalTokens, TranscriptPath: r.TranscriptPath},
	}
	if !r.UpdatedAt.IsZero() {
		s.Status.UpdatedAt = &metav1.Time{Time: r.UpdatedAt}
	}
	return s
}

// archivedRows are sessions_list's archived rows: the archived sessions' objects and the
// retired sessions' records, in one order, the retired ones marked. The records are read
// in pages in that order (the store filters by search) until the page of rows is full:
// past the Limit-th listed record, and past the records updated at the same time, none can
// come before it.
func (c *Call) archivedRows(ctx context.Context, p sessionrows.ListParams, visible func(*sessionsv1alpha1.AgentSession) bool) ([]sessionrows.SessionRow, error) {
	now := c.clock().Now()
	live, err := c.sessions(ctx)
	if err != nil {
		return nil, err
	}
	q := transcript.RetiredQuery{Search: p.Search, Limit: min(max(2*p.Limit, 64), transcript.MaxRetiredPage)}
	var retired []*sessionsv1alpha1.AgentSession
	for {
		recs, err := c.retiredRecords(ctx, q)
		if err != nil {
			return nil, err
		}
		full := false
		for _, s := range asArchived(recs, live) {
			if len(retired) >= p.Limit && sessionrows.UpdatedAt(s) < sessionrows.UpdatedAt(retired[len(retired)-1]) {
				full = true
				break
			}
			if sessionrows.Listed(s, p, now, visible) {
				retired = append(retired, s)
			}
		}
		if full || len(recs) < q.Limit {
			break
		}
		q.After, q.Limit = recs[len(recs)-1].Cursor(), min(2*q.Limit, transcript.MaxRetiredPage)
	}
	if len(retired) == 0 {
		return c.rows(ctx, p, visible)
	}
	rows := sessionrows.ListRows(slices.Concat(live, retired), p, now, visible)
	ids := make(map[string]struct{}, len(retired))
	for _, s := range retired {
		ids[s.Status.SessionID] = struct{}{}
	}
	for i := range rows {
		_, rows[i].Retired = ids[rows[i].SessionID]
	}
	return rows, nil
}

// visibleRetired is the retired session ref names (its key or sessionId), once the calling
// session sees it; a notFoundError when there is none.
func (c *Call) visibleRetired(ctx context.Context, ref string) (*sessionsv1alpha1.AgentSession, error) {
	recs, err := c.retiredRecords(ctx, transcript.RetiredQuery{Ref: ref})
	if err != nil {
		return nil, err
	}
	var retired []*sessionsv1alpha1.AgentSession
	if len(recs) > 0 {
		live, err := c.sessions(ctx)
		if err != nil {
			return nil, err
		}
		retired = asArchived(recs, live)
	}
	var target *sessionsv1alpha1.AgentSession
	for _, s := range retired {
		if s.Spec.Key == ref || s.Status.SessionID == ref {
			target = s
			break
		}
	}
	if target == nil {
		return nil, notFoundError{ref: ref}
	}
	pol, err := c.sessionPolicy(ctx)
	if err != nil {
		return nil, err
	}
	if ok, why := c.sees(ctx, pol, target); !ok {
		return nil, ForbiddenError{Why: why}
	}
	return target, nil
}

// visibleOrRetired is the live session ref names, else the retired one it names.
func (c *Call) visibleOrRetired(ctx context.Context, ref string) (*sessionsv1alpha1.AgentSession, error) {
	s, err := c.visibleSession(ctx, ref)
	if nf := (notFoundError{}); errors.As(err, &nf) {
		return c.visibleRetired(ctx, ref)
	}
	return s, err
}

// readSession reads a page of s's transcript, live or archived, once the caller may read it.
func (c *Call) readSession(ctx context.Context, s *sessionsv1alpha1.AgentSession, o transcript.ReadOptions) (transcript.Page, error) {
	if s.Status.Phase != sessionsv1alpha1.SessionArchived {
		return c.readTranscript(ctx, s.Name, s.Status.SessionID, o)
	}
	if err := c.mayRead(ctx, s.Name); err != nil {
		return transcript.Page{}, err
	}
	if c.Retired == nil {
		return transcript.Page{}, fmt.Errorf("session %s is archived and this host reads no archived transcripts", s.Spec.Key)
	}
	return c.Retired.ReadArchived(ctx, c.Namespace, s.Status.SessionID, o)
}

// restoreRetired recreates a retired session's object as the caller, with the annotation
// that has the AgentSession controller adopt its transcript, and waits for the outcome as
// a restore in place does. The object carries what a person may set on create (key,
// agent, names); the controller writes spawnedBy and parentSessionKey from the record.
func (c *Call) restoreRetired(ctx context.Context, a ManageArgs, notFound error) (any, error) {
	target, err := c.visibleRetired(ctx, a.SessionKey)
	if nf := (notFoundError{}); errors.As(err, &nf) {
		return &StatusResult{Status: StatusNotFound, Error: notFound.Error() + ": it was deleted (a sub-agent's cleanup: delete, or by hand) and the transcript store keeps no record of it, so there is nothing to restore"}, nil
	}
	if err != nil {
		return nil, err
	}
	sid := target.Status.SessionID
	if a.ExpectedSessionID != sid {
		return &StatusResult{Status: StatusForbidden, Error: fmt.Sprintf(
			"retired session %s is sessionId %q, not the expected %q: list sessions again (archived) and act on the session you mean",
			target.Spec.Key, sid, a.ExpectedSessionID)}, nil
	}
	if err := c.may(ctx, caller.ManageSession, target.Name); err != nil {
		if r := Refusal(err); r != nil {
			return r, nil
		}
		return nil, err
	}
	obj := &sessionsv1alpha1.AgentSession{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: target.Name,
			Annotations: map[string]string{sessionsv1alpha1.RestoreFromAnnotation: sid}},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: target.Spec.Key, AgentID: target.Spec.AgentID, DisplayName: target.Spec.DisplayName,
			Label: target.Spec.Label, Sandboxed: target.Spec.Sandboxed},
	}
	if err := c.Client.Create(ctx, obj); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return &StatusResult{Status: StatusError, Error: fmt.Sprintf(
				"cannot restore retired session %s: an AgentSession named %s exists again; archive or delete it first", target.Spec.Key, target.Name)}, nil
		}
		if r := Refusal(err); r != nil {
			return r, nil
		}
		return nil, err
	}
	obj.Status.SessionID = sid
	return c.waitRestore(ctx, obj)
}
