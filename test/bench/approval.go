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

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/mcptools/mcptest"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
)

func init() { register("approval", benchApproval) }

const (
	approvalNS      = "bench-approval"
	approvalWaiting = 1000
	// approvalDecided is how many of the waiting calls are approved one at a time.
	approvalDecided = 100
	// approvalSessions spreads the waiting turns over sessions (each session's turns run in
	// its lane one after another).
	approvalSessions = 50
)

// benchApproval runs a manager (devcluster: real processes, the webhooks, a person who is
// not the manager) with 1,000 turns waiting for approval, and reads its RSS against the same
// manager before any waited; then approves 100 of them one by one and times each from the
// decision's write returning to the MCP server seeing the approved call begin (the
// ToolApproval's status write, the owner's reconcile, the resumed turn's replay).
func benchApproval() ([]Figure, error) {
	ctx := context.Background()
	srv := mcptest.New(false)
	defer srv.Close()
	c, _, cl, _, stop, err := clusterClients(ctx, "bench-approval.log", nil, 500)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := approvalFixtures(ctx, cl, srv.URL); err != nil {
		return nil, err
	}
	time.Sleep(rssSettle)
	idle := processRSSMiB(c.ManagerPID())

	g := make(chan error, approvalWaiting)
	sem := make(chan struct{}, 32)
	for i := range approvalWaiting {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			g <- cl.Create(ctx, &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Name: "wait-" + strconv.Itoa(i), Namespace: approvalNS},
				Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: approvalKey(i % approvalSessions), Message: "echo " + strconv.Itoa(i), TimeoutSeconds: ptr.To[int32](0)}})
		}()
	}
	for range approvalWaiting {
		if err := <-g; err != nil {
			return nil, err
		}
	}
	start := time.Now()
	var pending []sessionsv1alpha1.ToolApproval
	for {
		if pending, err = sessiontools.PendingApprovals(ctx, cl, approvalNS); err != nil {
			return nil, err
		}
		if len(pending) >= approvalWaiting {
			break
		}
		if time.Since(start) > 15*time.Minute {
			return nil, fmt.Errorf("%d of %d calls wait for approval after 15 minutes", len(pending), approvalWaiting)
		}
		time.Sleep(time.Second)
	}
	fmt.Fprintf(os.Stderr, "bench: approval: %d calls wait after %s\n", len(pending), time.Since(start).Round(time.Second))
	time.Sleep(rssSettle)
	waiting := processRSSMiB(c.ManagerPID())

	var resume []time.Duration
	for i := range approvalDecided {
		ran := srv.EchoCalls()
		if err := sessiontools.Decide(ctx, cl, approvalNS, pending[i].Name, sessionsv1alpha1.DecisionApproved, ""); err != nil {
			return nil, err
		}
		decided := time.Now()
		for srv.EchoCalls() == ran {
			if time.Since(decided) > time.Minute {
				return nil, fmt.Errorf("approved call %s did not run within a minute", pending[i].Name)
			}
			time.Sleep(time.Millisecond)
		}
		resume = append(resume, srv.EchoStarts()[ran].Sub(decided))
	}
	if srv.EchoCalls() != approvalDecided {
		return nil, fmt.Errorf("the MCP server saw %d calls for %d approvals", srv.EchoCalls(), approvalDecided)
	}
	return []Figure{
		Compare("manager_rss_1000_waiting_mib", waiting, idle, "MiB",
			"RSS with 1,000 turns waiting for approval against none (they hold no slot or goroutine)"),
		{Name: "approval_resume_ms_p50", Value: quantileMS(resume, 0.5), Unit: "ms",
			Target: "decision written to the approved tool call started, p50"},
		{Name: "approval_resume_ms_p99", Value: quantileMS(resume, 0.99), Unit: "ms",
			Target: "decision written to the approved tool call started, p99"},
	}, nil
}

func approvalKey(i int) string { return "agent:careful:webchat:direct:u" + strconv.Itoa(i) }

// approvalFixtures: an Agent whose every call of its MCP server's echo waits for approval,
// and the sessions the waiting turns run in.
func approvalFixtures(ctx context.Context, cl client.Client, mcpURL string) error {
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: approvalNS}}); err != nil {
		return err
	}
	agent := &sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "careful", Namespace: approvalNS}, Spec: sessionsv1alpha1.AgentSpec{
		Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{{Match: "^echo", Reply: "{{toolResults}}",
			ToolCalls: []sessionsv1alpha1.ScriptToolCall{{Name: "mcp__s__echo", Arguments: &runtime.RawExtension{Raw: []byte(`{"text":"x"}`)}}}}}},
		Tools: sessionsv1alpha1.ToolsSpec{MCPServers: []sessionsv1alpha1.MCPServer{{Name: "s", URL: mcpURL}},
			Approval: &sessionsv1alpha1.ApprovalPolicy{Rules: []sessionsv1alpha1.ToolApprovalRule{{Tools: []string{"mcp__s__*"}, Action: sessionsv1alpha1.ApprovalRequire,
				TimeoutSeconds: ptr.To[int32](3600)}}}},
	}}
	if err := cl.Create(ctx, agent); err != nil {
		return err
	}
	for i := range approvalSessions {
		key := approvalKey(i)
		if err := cl.Create(ctx, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: approvalNS},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "careful", ChatType: sessionsv1alpha1.ChatTypeDirect}}); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a := &sessionsv1alpha1.Agent{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(agent), a); err != nil {
			return err
		}
		var ss sessionsv1alpha1.AgentSessionList
		if err := cl.List(ctx, &ss, client.InNamespace(approvalNS)); err != nil {
			return err
		}
		ready := 0
		for _, s := range ss.Items {
			if s.Status.SessionID != "" {
				ready++
			}
		}
		if ready == approvalSessions && meta.IsStatusConditionTrue(a.Status.Conditions, sessionsv1alpha1.ConditionReady) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("agent or sessions not ready: %d of %d sessions", ready, approvalSessions)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
