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

package caller

import (
	"context"

	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// Right is one thing a door (the history API, /events, /mcp, the console, A2A) asks before
// it acts for a caller: a SubjectAccessReview's verb on a resource of this API. Every door
// asks Access.May with one of the rights below, so a door cannot judge a caller its own way.
type Right struct {
	Name        string
	Verb        string
	Resource    string
	Subresource string
}

// The rights. Per-object rights are asked with the object's name (RBAC resourceNames);
// namespace rights with no name.
var (
	// ReadTranscript: read a session's transcript (history, events, sessions_history,
	// sessions_list messages). The history API's check since the start.
	ReadTranscript = Right{"ReadTranscript", "get", "agentsessions", "transcript"}
	// ListSessions: list the namespace's sessions; the entrance to /mcp and the console.
	ListSessions = Right{"ListSessions", "list", "agentsessions", ""}
	// CreateSend and CreateRun: start a send into a session, spawn a sub-agent.
	CreateSend = Right{"CreateSend", "create", "sessionsends", ""}
	CreateRun  = Right{"CreateRun", "create", "subagentruns", ""}
	// ActAs: speak for a session (a /mcp connection with ?session=, fromSessionKey,
	// requesterSessionKey); the webhook asks the same verb at admission.
	ActAs = Right{"ActAs", sessionsv1alpha1.VerbActAs, "agentsessions", ""}
	// CancelSend and CancelRun: set spec.cancel on a send or a run.
	CancelSend = Right{"CancelSend", "patch", "sessionsends", ""}
	CancelRun  = Right{"CancelRun", "patch", "subagentruns", ""}
	// ListApprovals: list the namespace's tool calls that wait for a person.
	ListApprovals = Right{"ListApprovals", "list", "toolapprovals", ""}
	// ManageSession: patch a session's label, model or thinking level, archive, restore or reset it
	// (the sessions tool).
	ManageSession = Right{"ManageSession", "patch", "agentsessions", ""}
	// DecideApproval: decide a waiting tool call (verb approve on toolapprovals).
	DecideApproval = Right{"DecideApproval", "approve", "toolapprovals", ""}
)

// Rights is every right, in the order docs/operations/security.md lists them.
func Rights() []Right {
	return []Right{ReadTranscript, ListSessions, CreateSend, CreateRun, ActAs, CancelSend, CancelRun, ManageSession, ListApprovals, DecideApproval}
}

// Attributes is the SubjectAccessReview that decides r on name in namespace.
func (r Right) Attributes(namespace, name string) authzv1.ResourceAttributes {
	return authzv1.ResourceAttributes{Verb: r.Verb, Group: sessionsv1alpha1.GroupVersion.Group, Resource: r.Resource,
		Subresource: r.Subresource, Namespace: namespace, Name: name}
}

// May is nil when u has r on the object name of namespace ("" for the namespace as a
// whole), a Forbidden API error when not, and another error when the API server could not
// answer. Answers are remembered as Check remembers them.
func (a *Access) May(ctx context.Context, u user.Info, r Right, namespace, name string) error {
	return a.Check(ctx, u, r.Attributes(namespace, name))
}
