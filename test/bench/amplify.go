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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/sessionkey"
)

// The amplification figure: 1,000 sends of a 64 KiB message each to an agent that answers
// {{input}} 400 times (26 MB unbounded), then the manager's RSS next to the memory limit of
// its container in config/manager/manager.yaml.
const (
	amplifySends       = 1000
	amplifyMessage     = 64 << 10
	amplifySessions    = 16
	amplifyNS          = "bench-amplify"
	managerLimitMiB    = 512 // config/manager/manager.yaml, container manager, limits.memory
	amplifyWaitTimeout = 20 * time.Minute
)

func init() {
	register("amplify", benchAmplify)
}

func benchAmplify() ([]Figure, error) {
	ctx := context.Background()
	c, _, cl, _, stop, err := clusterClients(ctx, "bench-amplify.log", nil, 200)
	if err != nil {
		return nil, err
	}
	defer stop()
	keys, err := amplifyFixtures(ctx, cl)
	if err != nil {
		return nil, err
	}
	msg := strings.Repeat("a", amplifyMessage)
	for i := range amplifySends {
		s := &sessionsv1alpha1.SessionSend{ObjectMeta: metav1.ObjectMeta{Namespace: amplifyNS, Name: fmt.Sprintf("amp-%04d", i)},
			Spec: sessionsv1alpha1.SessionSendSpec{SessionKey: keys[i%len(keys)], Message: msg, TimeoutSeconds: ptr.To[int32](0)}}
		if err := cl.Create(ctx, s); err != nil {
			return nil, fmt.Errorf("send %d: %w", i, err)
		}
	}
	deadline := time.Now().Add(amplifyWaitTimeout)
	for {
		var list sessionsv1alpha1.SessionSendList
		if err := cl.List(ctx, &list, client.InNamespace(amplifyNS)); err != nil {
			return nil, err
		}
		done := 0
		for _, s := range list.Items {
			if p := s.Status.Phase; p == sessionsv1alpha1.SendCompleted || p == sessionsv1alpha1.SendFailed {
				done++
			}
		}
		if done == amplifySends {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d amplified sends ended within %s", done, amplifySends, amplifyWaitTimeout)
		}
		time.Sleep(2 * time.Second)
	}
	rss := processRSSMiB(c.ManagerPID())
	return []Figure{Compare("manager_rss_amplify_mib", rss, managerLimitMiB, "MiB", "under the manager container's memory limit (ratio < 1)")}, nil
}

// amplifyFixtures makes the namespace, the amplifying agent and its sessions.
func amplifyFixtures(ctx context.Context, cl client.Client) ([]string, error) {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: amplifyNS}},
		&sessionsv1alpha1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "amp", Namespace: amplifyNS},
			Spec: sessionsv1alpha1.AgentSpec{Model: sessionsv1alpha1.ModelSpec{Provider: sessionsv1alpha1.ProviderScripted, Script: []sessionsv1alpha1.ScriptRule{
				{Match: "^Agent-to-agent announce step", Reply: sessionsv1alpha1.AnnounceSkip},
				{Match: "(?s).", Reply: strings.Repeat("{{input}}", 400)},
			}}}},
	}
	var keys []string
	for i := range amplifySessions {
		key := fmt.Sprintf("agent:amp:webchat:group:g%d", i)
		keys = append(keys, key)
		objs = append(objs, &sessionsv1alpha1.AgentSession{ObjectMeta: metav1.ObjectMeta{Name: sessionkey.ObjectName(key), Namespace: amplifyNS},
			Spec: sessionsv1alpha1.AgentSessionSpec{Key: key, AgentID: "amp", ChatType: sessionsv1alpha1.ChatTypeGroup}})
	}
	for _, o := range objs {
		if err := cl.Create(ctx, o); err != nil {
			return nil, err
		}
	}
	return keys, nil
}
