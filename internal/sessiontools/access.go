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

	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/caller"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// may asks the door's access layer whether the caller has r on the object name ("" for the
// namespace); the manager's own turns (no Access) are judged by visibility and admission.
func (c *Call) may(ctx context.Context, r caller.Right, name string) error {
	if c.Access == nil {
		return nil
	}
	return c.Access(ctx, r, name)
}

// readTranscript reads the transcript of the session named name, once the caller may read
// it: the store answers whoever asks, so this is the one way a tool reads it. A namespace-wide
// grant is asked first, so a list of N sessions costs one review, not N, for most callers.
func (c *Call) readTranscript(ctx context.Context, name, sessionID string, o transcript.ReadOptions) (transcript.Page, error) {
	if err := c.mayRead(ctx, name); err != nil {
		return transcript.Page{}, err
	}
	return c.Store.Read(ctx, c.Namespace, sessionID, o)
}

// mayRead says whether the caller may read the transcript of the session named name: a
// namespace-wide grant, else one on the session.
func (c *Call) mayRead(ctx context.Context, name string) error {
	if c.may(ctx, caller.ReadTranscript, "") != nil {
		return c.may(ctx, caller.ReadTranscript, name)
	}
	return nil
}

// createRight is the right creating obj asks: a send or a run.
func createRight(obj client.Object) caller.Right {
	if _, ok := obj.(*sessionsv1alpha1.SubagentRun); ok {
		return caller.CreateRun
	}
	return caller.CreateSend
}

// CancelRight is the right cancelling obj asks (Cancellable's objects).
func CancelRight(obj client.Object) caller.Right {
	if _, ok := obj.(*sessionsv1alpha1.SubagentRun); ok {
		return caller.CancelRun
	}
	return caller.CancelSend
}

// Cancel asks the controller to cancel a SessionSend or SubagentRun in the call's namespace,
// once the caller may: the access layer, then RBAC (patch, made as the caller) and the
// admission webhook judge it.
func (c *Call) Cancel(ctx context.Context, obj client.Object) error {
	if err := c.may(ctx, CancelRight(obj), obj.GetName()); err != nil {
		return err
	}
	return Cancel(ctx, c.Client, obj)
}
