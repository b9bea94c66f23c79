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

package sandbox_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	sandboxv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	sandboxextv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox"
	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Acquire against agent-sandbox's real controller, reading claims and Sandboxes from an
// informer cache as the manager does: the first call claims and waits, woken by the cache's
// events (no timer), until the sandbox's Pod is Ready; the test stands in for the kubelet (it
// marks the Pod Ready) and a real sandboxd for the Pod's container. A suspended sandbox is
// resumed by the next Acquire, which waits for the new Pod.
func TestAcquireWaitsAndResumes(t *testing.T) {
	cfg, c := testenv.StartT(t)
	testenv.StartSandboxController(t, cfg)
	grpcPort, restPort := testenv.StartSandboxdPorts(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	informers, err := cache.New(cfg, cache.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cached, err := client.New(cfg, client.Options{Scheme: testenv.Scheme(), Cache: &client.CacheOptions{Reader: informers}})
	if err != nil {
		t.Fatal(err)
	}
	var dialled atomic.Int32
	dial := func(ctx context.Context, namespace, pod string, port int) (net.Conn, error) {
		dialled.Add(1)
		local := map[int]int{sandbox.GRPCPort: grpcPort, sandbox.RESTPort: restPort}[port]
		var d net.Dialer
		return d.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(local))
	}
	sbx, err := sandbox.NewSandboxes(ctx, cached, informers, c, dial, clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "coder", Namespace: "team"}}
	agent.Spec.Sandbox.Enabled = true
	for _, obj := range []client.Object{sandbox.Template(agent, "example/sandbox:1", ""), sandbox.WarmPool(agent)} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	session := &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: "s1", Namespace: "team"},
		Spec: sessionsv1alpha1.AgentSessionSpec{Key: "agent:coder:main", AgentID: "coder", Sandboxed: true}}
	if err := c.Create(ctx, session); err != nil {
		t.Fatal(err)
	}

	type acquired struct {
		c   *sandboxd.Client
		err error
	}
	phases := &phaseLog{}
	acquire := func() <-chan acquired {
		ch := make(chan acquired, 1)
		go func() {
			actx, acancel := context.WithTimeout(sandbox.WithPhases(ctx, phases.observe), testenv.Timeout)
			defer acancel()
			c, err := sbx.Acquire(actx, agent, session)
			ch <- acquired{c, err}
		}()
		return ch
	}
	// podReady plays the kubelet: the sandbox's current Pod runs and is Ready.
	podReady := func(what string) {
		t.Helper()
		claim := &sandboxextv1beta1.SandboxClaim{}
		pod := &corev1.Pod{}
		testenv.Eventually(t, what, func() (bool, error) {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: sandbox.ClaimName(session)}, claim); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			sb, err := sandbox.BoundSandbox(ctx, c, claim)
			if sb == nil || err != nil || sb.Spec.OperatingMode == sandboxv1beta1.SandboxOperatingModeSuspended {
				return false, err
			}
			name := sb.Name
			if p := sb.Annotations[sandboxv1beta1.SandboxPodNameAnnotation]; p != "" {
				name = p
			}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, pod); err != nil || pod.DeletionTimestamp != nil {
				return false, client.IgnoreNotFound(err)
			}
			now := metav1.Now()
			pod.Status.Phase, pod.Status.PodIP = corev1.PodRunning, "127.0.0.1"
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
			err = c.Status().Update(ctx, pod)
			return err == nil, client.IgnoreNotFound(err)
		})
	}
	run := func(what string, ch <-chan acquired) {
		t.Helper()
		var got acquired
		select {
		case got = <-ch:
		case <-time.After(testenv.Timeout):
			t.Fatalf("%s: Acquire did not return", what)
		}
		if got.err != nil {
			t.Fatalf("%s: %v", what, got.err)
		}
		res, err := got.c.Exec(ctx, []string{"sh", "-c", "echo hi"}, ".", time.Minute, sandbox.MaxOutputBytes)
		if err != nil || res.Stdout != "hi\n" {
			t.Fatalf("%s: exec = %+v, %v", what, res, err)
		}
	}

	first := acquire()
	podReady("the first sandbox's Pod Ready")
	run("the first Acquire", first)
	if got, want := phases.firsts(), []sandbox.AcquirePhase{sandbox.PhaseClaimed, sandbox.PhaseBound, sandbox.PhaseReady, sandbox.PhaseConnected, sandbox.PhaseServing}; !slices.Equal(got, want) {
		t.Errorf("the first Acquire's phases %v, want %v in that order", got, want)
	}
	claim := &sandboxextv1beta1.SandboxClaim{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: sandbox.ClaimName(session)}, claim); err != nil {
		t.Fatal(err)
	}
	if claim.Annotations[sandbox.LastUsedAnnotation] == "" {
		t.Error("Acquire did not stamp the claim's last use")
	}

	sb, err := sandbox.BoundSandbox(ctx, c, claim)
	if err != nil || sb == nil {
		t.Fatalf("bound Sandbox: %v, %v", sb, err)
	}
	if err := sandbox.SetMode(ctx, c, sb, sandboxv1beta1.SandboxOperatingModeSuspended); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the suspended sandbox's Pod gone", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: sb.Name}, &corev1.Pod{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	second := acquire()
	podReady("the resumed sandbox's Pod Ready")
	run("the Acquire that resumes", second)
	if err := c.Get(ctx, client.ObjectKeyFromObject(sb), sb); err != nil || sb.Spec.OperatingMode != sandboxv1beta1.SandboxOperatingModeRunning {
		t.Errorf("after Acquire the Sandbox's operatingMode = %q (%v), want Running", sb.Spec.OperatingMode, err)
	}
	if n := dialled.Load(); n < 2 {
		t.Errorf("dialled %d times: want the first Pod and the resumed one", n)
	}
}

// phaseLog keeps the phases Acquire reports (sandbox.WithPhases), each at its first report.
type phaseLog struct {
	mu   sync.Mutex
	seen []sandbox.AcquirePhase
}

func (l *phaseLog) observe(p sandbox.AcquirePhase) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.seen, p) {
		l.seen = append(l.seen, p)
	}
}

func (l *phaseLog) firsts() []sandbox.AcquirePhase {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}
