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

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
)

// LastUsedAnnotation on a SandboxClaim is when a tool call last ran in its sandbox (RFC 3339).
// The turn engine stamps it (Sandboxes.Acquire); the AgentSession controller reads it into
// status.sandbox.lastUsed and suspends the sandbox idleSeconds after it.
const LastUsedAnnotation = "sessions.agents.dev/last-used"

// +kubebuilder:rbac:groups=extensions.agents.x-k8s.io,resources=sandboxclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=agents.x-k8s.io,resources=sandboxes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get
// +kubebuilder:rbac:groups="",resources=pods/portforward,verbs=create

// A claim names its session as controller with blockOwnerDeletion (Claim): where the
// OwnerReferencesPermissionEnforcement admission plugin is on (OpenShift), that takes
// update on the owner's finalizers, which is all the manager still needs them for (the
// sessions carry no finalizer of the operator's any more).
// +kubebuilder:rbac:groups=sessions.agents.dev,resources=agentsessions/finalizers,verbs=update

// A new Pod is Ready once its container started, which can be before sandboxd listens:
// Acquire asks sandboxd's health first after servingPollFirst, then twice as long each time
// up to a second, for at most servingTimeout (there is no event to wait for).
const (
	servingPollFirst = 5 * time.Millisecond
	servingTimeout   = 30 * time.Second
)

// ErrCannotStart is the error of a sandbox that failed and that waiting will not mend.
var ErrCannotStart = errors.New("the sandbox cannot start")

// Sandboxes gives a sandboxed session's tool calls its sandbox: it claims one on the first
// call, resumes a suspended one, waits until it is Ready, and keeps one sandboxd client per
// sandbox Pod. It is the manager's one instance, given to the turn engine at construction.
// Its waits are woken by the informer cache's events on claims and Sandboxes, never by a
// timer.
type Sandboxes struct {
	client client.Client
	// pods reads Pods uncached: the manager keeps no informer on every Pod of the cluster.
	pods    client.Reader
	dial    PodDial
	clock   clock.Clock
	changes *changes

	mu      sync.Mutex
	clients map[types.NamespacedName]podClient // by Sandbox
}

// podClient is the sandboxd client of one Pod of a Sandbox: a resumed sandbox is a new Pod.
type podClient struct {
	pod    types.UID
	client *sandboxd.Client
}

// NewSandboxes returns the sandboxes of c's cluster, c reading claims and Sandboxes from
// the cache of informers, their Pods read with pods, reached through dial.
func NewSandboxes(ctx context.Context, c client.Client, informers cache.Informers, pods client.Reader, dial PodDial, clk clock.Clock) (*Sandboxes, error) {
	s := &Sandboxes{client: c, pods: pods, dial: dial, clock: clk, changes: newChanges(), clients: map[types.NamespacedName]podClient{}}
	if err := s.changes.watch(ctx, informers); err != nil {
		return nil, err
	}
	return s, nil
}

// Acquire returns a client of the session's sandbox, ready for a tool call, claiming or
// resuming it first; ctx bounds the wait.
func (s *Sandboxes) Acquire(ctx context.Context, agent *sessionsv1alpha1.Agent, session *sessionsv1alpha1.AgentSession) (*sandboxd.Client, error) {
	changed, stop := s.changes.subscribe(types.NamespacedName{Namespace: session.Namespace, Name: ClaimName(session)})
	defer stop()
	for {
		c, err := s.look(ctx, agent, session, true)
		if c != nil || err != nil {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the sandbox: %w", ctx.Err())
		case <-changed:
		}
	}
}

// Ready is one look of Acquire that never waits: it claims the session's sandbox or resumes
// it, and returns a client of it when it is ready and its sandboxd answers now, nil (and no
// error) while it is on its way. A reconciler calls it and looks again later.
func (s *Sandboxes) Ready(ctx context.Context, agent *sessionsv1alpha1.Agent, session *sessionsv1alpha1.AgentSession) (*sandboxd.Client, error) {
	return s.look(ctx, agent, session, false)
}

// look is one look at the session's sandbox; a Ready Pod's sandboxd is waited for when
// waitServing, else asked once.
func (s *Sandboxes) look(ctx context.Context, agent *sessionsv1alpha1.Agent, session *sessionsv1alpha1.AgentSession, waitServing bool) (*sandboxd.Client, error) {
	observe := phases(ctx)
	claim, err := EnsureClaim(ctx, s.client, session, agent)
	if err != nil {
		return nil, err
	}
	observe(PhaseClaimed)
	if err := s.touch(ctx, claim); err != nil {
		return nil, err
	}
	sb, err := BoundSandbox(ctx, s.client, claim)
	if err != nil {
		return nil, err
	}
	if sb != nil {
		observe(PhaseBound)
	}
	if sb != nil && sb.Spec.OperatingMode == sandboxv1beta1.SandboxOperatingModeSuspended {
		if err := SetMode(ctx, s.client, sb, sandboxv1beta1.SandboxOperatingModeRunning); err != nil {
			return nil, fmt.Errorf("resume the sandbox: %w", err)
		}
		return nil, nil
	}
	switch phase, msg := Phase(claim, sb); phase {
	case sessionsv1alpha1.SandboxFailed:
		return nil, fmt.Errorf("%w: %s", ErrCannotStart, msg)
	case sessionsv1alpha1.SandboxReady:
		observe(PhaseReady)
		return s.clientFor(ctx, sb, waitServing)
	}
	return nil, nil
}

// touch stamps the claim's last use, at most every few seconds (a write per tool call would
// cost the API server more than the idle timer needs).
func (s *Sandboxes) touch(ctx context.Context, claim *sandboxextv1beta1.SandboxClaim) error {
	now := s.clock.Now()
	if t, err := time.Parse(time.RFC3339, claim.Annotations[LastUsedAnnotation]); err == nil && now.Sub(t) < 5*time.Second {
		return nil
	}
	patch := client.MergeFrom(claim.DeepCopy())
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[LastUsedAnnotation] = now.UTC().Format(time.RFC3339)
	return s.client.Patch(ctx, claim, patch)
}

// clientFor returns the sandboxd client of the Sandbox's current Pod once its sandboxd
// answers: waited for up to servingTimeout when waitServing, else nil while it does not.
func (s *Sandboxes) clientFor(ctx context.Context, sb *sandboxv1beta1.Sandbox, waitServing bool) (*sandboxd.Client, error) {
	name := sb.Annotations[sandboxv1beta1.SandboxPodNameAnnotation]
	if name == "" {
		name = sb.Name
	}
	pod := &corev1.Pod{}
	if err := s.pods.Get(ctx, types.NamespacedName{Namespace: sb.Namespace, Name: name}, pod); err != nil {
		return nil, fmt.Errorf("the sandbox's Pod: %w", err)
	}
	key := client.ObjectKeyFromObject(sb)
	observe := phases(ctx)
	s.mu.Lock()
	if pc, ok := s.clients[key]; ok && pc.pod == pod.UID {
		s.mu.Unlock()
		observe(PhaseConnected)
		observe(PhaseServing)
		return pc.client, nil
	}
	s.mu.Unlock()
	ns := pod.Namespace
	var connected sync.Once
	c, err := sandboxd.New(func(ctx context.Context, port int) (net.Conn, error) {
		conn, err := s.dial(ctx, ns, name, port)
		if err == nil {
			connected.Do(func() { observe(PhaseConnected) })
		}
		return conn, err
	}, GRPCPort, RESTPort)
	if err != nil {
		return nil, err
	}
	// A new Pod is Ready once its container started, which can be before sandboxd listens.
	if !waitServing {
		if c.Health(ctx) != nil {
			_ = c.Close()
			return nil, nil
		}
		observe(PhaseServing)
	} else if err := s.serving(ctx, c); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("sandboxd of Pod %s/%s: %w", ns, name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if pc, ok := s.clients[key]; ok {
		if pc.pod == pod.UID { // a racing call got there first
			_ = c.Close()
			return pc.client, nil
		}
		_ = pc.client.Close() // the Pod it dialled is gone
	}
	s.clients[key] = podClient{pod: pod.UID, client: c}
	return c, nil
}

// serving waits until sandboxd answers its health check, looking again after
// servingPollFirst and twice as long each time up to a second, for at most servingTimeout.
// The gRPC connection an exec takes is set up meanwhile, and tried again at once when
// sandboxd answers.
func (s *Sandboxes) serving(ctx context.Context, c *sandboxd.Client) error {
	ctx, cancel := context.WithTimeout(ctx, servingTimeout)
	defer cancel()
	c.Warm()
	for wait := servingPollFirst; ; wait = min(2*wait, time.Second) {
		err := c.Health(ctx)
		if err == nil {
			phases(ctx)(PhaseServing)
			c.RetryNow()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not serving: %w (last: %v)", ctx.Err(), err)
		case <-s.clock.After(wait):
		}
	}
}

// Forget closes the client of a Sandbox that was released.
func (s *Sandboxes) Forget(sandbox types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pc, ok := s.clients[sandbox]; ok {
		_ = pc.client.Close()
		delete(s.clients, sandbox)
	}
}
