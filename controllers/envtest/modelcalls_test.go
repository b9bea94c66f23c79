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

package envtest

import (
	"context"
	"strings"
	"sync"

	"github.com/agent-sessions/agent-session-operator/internal/provider"
)

// modelCalls wraps the real providers and remembers, for every model call, the text of its
// last message and whether it returned with its request context cancelled.
type modelCalls struct {
	mu    sync.Mutex
	calls []*modelCall
}

type modelCall struct {
	input     string
	cancelled bool
}

func (m *modelCalls) wrap(cfg provider.Config) (provider.Provider, error) {
	p, err := provider.New(cfg)
	if err != nil {
		return nil, err
	}
	return watchedProvider{Provider: p, calls: m}, nil
}

type watchedProvider struct {
	provider.Provider
	calls *modelCalls
}

func (w watchedProvider) Complete(ctx context.Context, req provider.Request) (*provider.Response, error) {
	c := &modelCall{}
	if n := len(req.Messages); n > 0 {
		c.input = req.Messages[n-1].Text
	}
	w.calls.mu.Lock()
	w.calls.calls = append(w.calls.calls, c)
	w.calls.mu.Unlock()
	res, err := w.Provider.Complete(ctx, req)
	w.calls.mu.Lock()
	c.cancelled = ctx.Err() != nil // the call ended with its request context cancelled
	w.calls.mu.Unlock()
	return res, err
}

// state reports whether a model call whose input contains text started, and whether its
// request context was cancelled while it ran.
func (m *modelCalls) state(text string) (started, cancelled bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.calls {
		if strings.Contains(c.input, text) {
			started = true
			cancelled = cancelled || c.cancelled
		}
	}
	return started, cancelled
}
