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

package turns

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
	"github.com/agent-sessions/agent-session-operator/internal/egress"
	"github.com/agent-sessions/agent-session-operator/internal/provider"
	"github.com/agent-sessions/agent-session-operator/internal/secretaccess"
	"github.com/agent-sessions/agent-session-operator/internal/sessiontools"
	"github.com/agent-sessions/agent-session-operator/internal/transcript"
)

// providerCache keeps one provider per Agent, rebuilt when the Agent or its API key Secret
// changes (by resourceVersion): building the scripted provider compiles its rules, and the
// HTTP providers keep their connection pools.
type providerCache struct {
	mu sync.Mutex
	m  map[types.NamespacedName]cachedProvider
	// http is the one HTTP client of every model call (the egress policy, no redirects, one
	// connection pool), made on first use.
	http *http.Client
}

type cachedProvider struct {
	version string
	p       provider.Provider
}

// provider returns the provider agent selects.
func (e *Engine) provider(ctx context.Context, agent *sessionsv1alpha1.Agent) (provider.Provider, error) {
	m := &agent.Spec.Model
	var secret *corev1.Secret
	version := agent.ResourceVersion
	if ref := m.APIKeySecretRef; ref != nil {
		var err error
		if secret, err = secretaccess.Get(ctx, e.opts.APIReader, agent, ref.Name); err != nil {
			return nil, fmt.Errorf("agent %s: API key secret %s: %w", agent.Name, ref.Name, err)
		}
		version += "/" + secret.ResourceVersion
	}
	name := types.NamespacedName{Namespace: agent.Namespace, Name: agent.Name}
	c := &e.providers
	c.mu.Lock()
	defer c.mu.Unlock()
	if got, ok := c.m[name]; ok && got.version == version && version != "" {
		return got.p, nil
	}
	cfg, err := providerConfig(agent, secret)
	if err != nil {
		return nil, err
	}
	cfg.Clock, cfg.AttemptTimeout, cfg.IdleTimeout = e.clock, e.opts.ModelAttemptTimeout, e.opts.ModelIdleTimeout
	cfg.Stream = e.opts.LiveReplies
	if c.http == nil {
		c.http = e.opts.Egress.Client(egress.ClientOptions{})
	}
	cfg.HTTPClient, cfg.Egress = c.http, e.opts.Egress
	p, err := e.opts.NewProvider(cfg)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", agent.Name, err)
	}
	if c.m == nil {
		c.m = map[types.NamespacedName]cachedProvider{}
	}
	c.m[name] = cachedProvider{version: version, p: p}
	return p, nil
}

// providerConfig maps an Agent's model spec (and its API key Secret, if any) onto a
// provider.Config.
func providerConfig(agent *sessionsv1alpha1.Agent, secret *corev1.Secret) (provider.Config, error) {
	m := &agent.Spec.Model
	cfg := provider.Config{Provider: string(m.Provider), Model: m.Name, BaseURL: m.BaseURL}
	if ref := m.APIKeySecretRef; ref != nil && secret != nil {
		key, ok := secret.Data[ref.Key]
		if !ok {
			return cfg, fmt.Errorf("agent %s: secret %s has no key %q", agent.Name, ref.Name, ref.Key)
		}
		cfg.APIKey = string(key)
	}
	for _, r := range m.Script {
		rule := provider.ScriptRule{Match: r.Match, Reply: r.Reply}
		if r.Delay != nil {
			rule.Delay = r.Delay.Duration
		}
		for _, tc := range r.ToolCalls {
			call := provider.ScriptToolCall{Name: tc.Name}
			if tc.Arguments != nil && len(tc.Arguments.Raw) > 0 {
				call.Arguments = json.RawMessage(tc.Arguments.Raw)
			}
			rule.ToolCalls = append(rule.ToolCalls, call)
		}
		cfg.Script = append(cfg.Script, rule)
	}
	return cfg, nil
}

// embeddings is an Agent's embeddings provider with the API key its secretRef selects (read
// uncached, under secretaccess's rule), for the store to embed its memory with.
func (e *Engine) embeddings(ctx context.Context, agent *sessionsv1alpha1.Agent) (*transcript.EmbeddingsSpec, error) {
	s := sessiontools.EmbeddingsOf(agent)
	if s == nil {
		return nil, nil
	}
	if ref := agent.Spec.Memory.Embeddings.SecretRef; ref != nil {
		v, err := secretaccess.Value(ctx, e.opts.APIReader, agent, ref.Name, ref.Key)
		if err != nil {
			return nil, fmt.Errorf("agent %s: embeddings secret %s: %w", agent.Name, ref.Name, err)
		}
		s.APIKey = string(v)
	}
	return s, nil
}
