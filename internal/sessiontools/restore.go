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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// restoreWait bounds how long the sessions tool's restore waits for the controller's
// outcome; past it the restore is accepted and goes on.
const restoreWait = 10 * time.Second

// fresh is the session read from the API server: the guarded actions build their patch
// from its annotations and judge its conditions, which a cache may leave out (the
// transcript-store's does). A read the caller may not make keeps the cached copy.
func (c *Call) fresh(ctx context.Context, s *sessionsv1alpha1.AgentSession) *sessionsv1alpha1.AgentSession {
	got := &sessionsv1alpha1.AgentSession{}
	if err := c.apiReader().Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
		return s
	}
	return got
}

// restorable refuses a restore of a session that is not archived, or whose archived
// transcript a restore already found gone; nil lets the restore go on.
func restorable(s *sessionsv1alpha1.AgentSession) *StatusResult {
	if s.Status.Phase != sessionsv1alpha1.SessionArchived {
		phase := s.Status.Phase
		if phase == "" {
			phase = sessionsv1alpha1.SessionActive
		}
		return &StatusResult{Status: StatusError, Error: fmt.Sprintf(
			"session %s is not archived (phase %s): there is nothing to restore", s.Spec.Key, phase)}
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, sessionsv1alpha1.ConditionArchived); c != nil && c.Reason == sessionsv1alpha1.ReasonRestoreFailed {
		return &StatusResult{Status: StatusNotFound, Error: fmt.Sprintf("session %s: %s", s.Spec.Key, c.Message)}
	}
	return nil
}

// restoreOutcome reads the controller's answer to a restore of sessionID off the session:
// Active again (ok), or still Archived with RestoreFailed (not_found); settled is false
// while neither shows.
func restoreOutcome(s *sessionsv1alpha1.AgentSession, sessionID string) (out any, settled bool) {
	switch {
	case s.Status.SessionID == "" && s.Status.Phase == "":
		return nil, false // a recreated session its controller has not adopted the transcript into yet
	case s.Status.SessionID == "":
		if refused := restorable(s); refused != nil {
			return refused, true
		}
		return nil, false
	case s.Status.SessionID != sessionID:
		return &StatusResult{Status: StatusError, Error: fmt.Sprintf(
			"session %s is now sessionId %q, not the restored %q", s.Spec.Key, s.Status.SessionID, sessionID)}, true
	case s.Status.Phase == sessionsv1alpha1.SessionActive:
		return ManageResult{Status: StatusOK, Action: ActionRestore, SessionKey: s.Spec.Key, SessionID: sessionID}, true
	}
	if refused := restorable(s); refused != nil {
		return refused, true
	}
	return nil, false
}

// waitRestore follows the session, up to restoreWait, until the controller restored it or
// found nothing to restore; a restore it sees no outcome of in time (or cannot watch) is
// accepted, and sessions_list shows it not archived once the controller is done.
func (c *Call) waitRestore(ctx context.Context, s *sessionsv1alpha1.AgentSession) (any, error) {
	accepted := ManageResult{Status: StatusAccepted, Action: ActionRestore, SessionKey: s.Spec.Key, SessionID: s.Status.SessionID,
		Note: "the session's controller restores it; sessions_list shows it not archived once it has"}
	if c.Watcher == nil {
		return accepted, nil
	}
	limit := c.clock().NewTimer(restoreWait)
	defer limit.Stop()
	w, err := c.Watcher.Watch(ctx, &sessionsv1alpha1.AgentSessionList{}, client.InNamespace(s.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", s.Name)})
	if err != nil {
		return accepted, nil
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-limit.C():
			return accepted, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return accepted, nil
			}
			got, isSession := ev.Object.(*sessionsv1alpha1.AgentSession)
			if !isSession || ev.Type == watch.Deleted {
				continue
			}
			if out, settled := restoreOutcome(got, s.Status.SessionID); settled {
				return out, nil
			}
		}
	}
}
