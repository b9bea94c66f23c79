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

// Package webhook holds the admission webhooks, one file per kind. They gather inputs from
// the manager's cache and format the answer; every decision comes from internal/policy.
package webhook

import (
	"errors"
	"net/http"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/cacheindex"
	"github.com/agent-sessions/agent-session-operator/internal/policy"
	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

// Options configure the webhooks.
type Options struct {
	// ManagerUsername is the manager's own user (its ServiceAccount): the one user that
	// speaks for any session, sets the operator's annotations and spawnedBy; empty lets
	// nobody.
	ManagerUsername string
	// ToolCreatesPerMinute is the default rate of tool-made sends and spawns per namespace
	// (SessionPolicy spec.limits.toolCreatesPerMinute overrides it); 0 uses
	// policy.DefaultToolCreatesPerMinute.
	ToolCreatesPerMinute int
	// Clock drives the rate buckets, the chains' tallies, the budget windows and the
	// ToolApprovals' expiry (give it the controllers' clock); nil is the real clock.
	Clock clock.PassiveClock
	// Events records on a chain's root the chain limit it hit; nil records none.
	Events recorder.EventRecorder
	// Shard is the manager's shard: its cache holds only its namespaces' sessions, sends
	// and runs, so the webhook reads other namespaces' from the API server, and stamps
	// shard.Label on new ones.
	Shard shard.Shard
}

// SetupWithManager registers every webhook with the manager's webhook server. The cache's
// field indexes must be registered first (cacheindex.Setup).
func SetupWithManager(mgr ctrl.Manager, o Options) error {
	api := mgr.GetAPIReader()
	r := cacheindex.ShardClient(mgr.GetClient(), api, o.Shard)
	az := authz{Client: r, Manager: o.ManagerUsername}
	ch := newChains(o, api)
	bg := budgetGate{clock: o.Clock}
	gate := secretGate{authz: az, Secrets: api}
	st := starters{authz: az, Reader: r, APIReader: api}
	// Every send is admitted here: its handler decodes the object once, typed (withTypedValidator).
	mgr.GetWebhookServer().Register(SessionSendValidatePath, NewSessionSendWebhook(&SessionSendValidator{Reader: r, APIReader: api, authz: az, chains: ch, budgetGate: bg}))
	return errors.Join(
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.SessionSend{}).
			WithDefaulter(ShardLabel[*sessionsv1alpha1.SessionSend]{o.Shard}).WithLogConstructor(RequestLog).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.SubagentRun{}).WithValidator(withLog[*sessionsv1alpha1.SubagentRun]("subagentRun", &SubagentRunValidator{Reader: r, APIReader: api, authz: az, chains: ch, budgetGate: bg})).
			WithDefaulter(&SubagentRunDefaulter{Reader: r, APIReader: api, Shard: o.Shard}).WithLogConstructor(RequestLog).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.AgentSession{}).WithValidator(withLog[*sessionsv1alpha1.AgentSession]("agentSession", &AgentSessionValidator{Reader: r, authz: az})).
			WithDefaulter(ShardLabel[*sessionsv1alpha1.AgentSession]{o.Shard}).WithLogConstructor(RequestLog).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.SessionPolicy{}).WithValidator(withLog[*sessionsv1alpha1.SessionPolicy]("sessionPolicy", &SessionPolicyValidator{})).
			WithDefaulter(&PolicySecrets{gate}).WithLogConstructor(RequestLog).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.Agent{}).WithValidator(withLog[*sessionsv1alpha1.Agent]("agent", &AgentValidator{})).
			WithDefaulter(&AgentSecrets{gate}).WithLogConstructor(RequestLog).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.ToolApproval{}).WithValidator(withLog[*sessionsv1alpha1.ToolApproval]("toolApproval", &ToolApprovalValidator{authz: az, clock: o.Clock})).
			WithDefaulter(DecidedBy{}).WithLogConstructor(RequestLog).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.SessionSchedule{}).WithValidator(withLog[*sessionsv1alpha1.SessionSchedule]("sessionSchedule",
			onSpecChange[*sessionsv1alpha1.SessionSchedule]{check: (&SessionScheduleValidator{st}).Validate, spec: func(s *sessionsv1alpha1.SessionSchedule) any { return s.Spec },
				warn: (&SessionScheduleValidator{st}).Warnings})).WithLogConstructor(RequestLog).Complete(),
		ctrl.NewWebhookManagedBy(mgr, &sessionsv1alpha1.SessionHook{}).WithValidator(withLog[*sessionsv1alpha1.SessionHook]("sessionHook",
			onSpecChange[*sessionsv1alpha1.SessionHook]{check: (&SessionHookValidator{st}).Validate, spec: func(h *sessionsv1alpha1.SessionHook) any { return h.Spec }})).
			WithDefaulter(&HookSecrets{gate}).WithLogConstructor(RequestLog).Complete(),
	)
}

// newChains builds the chain limits; api lists a chain's members (nil: the chain limits
// are not enforced).
func newChains(o Options, api client.Reader) chains {
	perMinute := o.ToolCreatesPerMinute
	if perMinute <= 0 {
		perMinute = policy.DefaultToolCreatesPerMinute
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	c := chains{rate: newToolRate(o.Clock), defaultPerMinute: perMinute, clock: clk, doors: newDoorSends(clk)}
	if api != nil {
		c.ledger = newChainLedger(o.Clock, api, o.Events)
	}
	return c
}

// NewSessionSendValidator is the SessionSend validator SetupWithManager registers, for
// callers that serve it themselves (the benchmark): r reads the cache, c creates
// SubjectAccessReviews for users other than o.ManagerUsername.
func NewSessionSendValidator(r client.Reader, c client.Client, o Options) *SessionSendValidator {
	return &SessionSendValidator{Reader: r, authz: authz{Client: c, Manager: o.ManagerUsername}, chains: newChains(o, r), budgetGate: budgetGate{clock: o.Clock}}
}

// SessionSendValidatePath is the SessionSend validating webhook's path (its marker's).
const SessionSendValidatePath = "/validate-sessions-agents-dev-v1alpha1-sessionsend"

// NewSessionSendWebhook is the SessionSend validating webhook SetupWithManager serves (the
// benchmark serves it too): v's decisions, logged at V(2), on a review and an object each
// decoded once.
func NewSessionSendWebhook(v *SessionSendValidator) http.Handler {
	return reviewDecoder{newSessionSendWebhook(v)}
}

func newSessionSendWebhook(v *SessionSendValidator) *admission.Webhook {
	wh := withTypedValidator(sessionsv1alpha1.GroupVersion.WithKind("SessionSend"), func() *sessionsv1alpha1.SessionSend { return &sessionsv1alpha1.SessionSend{} },
		withLog[*sessionsv1alpha1.SessionSend]("sessionSend", v))
	wh.LogConstructor = RequestLog
	return wh
}
