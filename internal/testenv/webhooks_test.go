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

package testenv

import (
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/internal/shard"
)

// An install of one shard has every webhook of config/webhook but the shard label's; a
// name config/webhook does not have is an error, not a webhook silently left installed.
func TestWithWebhooksExceptLeavesOutOnlyTheNamed(t *testing.T) {
	names := func(opt Option) (mutating, validating []string) {
		e := &envtest.Environment{}
		opt(e)
		for _, c := range e.WebhookInstallOptions.MutatingWebhooks {
			for _, w := range c.Webhooks {
				mutating = append(mutating, w.Name)
			}
		}
		for _, c := range e.WebhookInstallOptions.ValidatingWebhooks {
			for _, w := range c.Webhooks {
				validating = append(validating, w.Name)
			}
		}
		return mutating, validating
	}
	all, err := WithWebhooksExcept()
	if err != nil {
		t.Fatal(err)
	}
	one, err := WithWebhooksExcept(shard.LabelWebhooks...)
	if err != nil {
		t.Fatal(err)
	}
	allM, allV := names(all)
	oneM, oneV := names(one)
	for _, n := range shard.LabelWebhooks {
		if !slices.Contains(allM, n) || slices.Contains(oneM, n) {
			t.Errorf("%s: in every webhook %v, left out of one shard's %v: want both", n, slices.Contains(allM, n), !slices.Contains(oneM, n))
		}
	}
	if len(oneM) != len(allM)-len(shard.LabelWebhooks) || len(oneV) != len(allV) || len(allV) == 0 {
		t.Errorf("one shard's webhooks: %d mutating of %d, %d validating of %d: want all but the shard label's", len(oneM), len(allM), len(oneV), len(allV))
	}
	if _, err := WithWebhooksExcept("mnothing.sessions.agents.dev"); err == nil {
		t.Error("an unknown webhook name was accepted")
	}
}
