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
	"flag"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sessionsv1alpha1 "github.com/agent-sessions/agent-session-operator/api/v1alpha1"
)

// withBudgets configures the send suites' SessionPolicy with budgets no send reaches, so
// that `-run '^(send|send-c1)$' -budgets` gives the send figures with every budget check on,
// to set beside a run without the flag.
var withBudgets = flag.Bool("budgets", false, "give the send suites' SessionPolicy generous budgets (namespace window, perSend, perRun)")

// benchBudgets are the budgets of the send suites' SessionPolicy under -budgets.
func benchBudgets() *sessionsv1alpha1.Budgets {
	if !*withBudgets {
		return nil
	}
	return &sessionsv1alpha1.Budgets{
		Namespace: &sessionsv1alpha1.NamespaceBudget{Window: metav1.Duration{Duration: 24 * time.Hour}, MaxCost: "1000000", MaxTokens: ptr.To[int64](1_000_000_000_000)},
		PerSend:   &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxCost: "1000", MaxTokens: ptr.To[int64](100_000_000), MaxTurns: ptr.To[int32](1000)}},
		PerRun:    &sessionsv1alpha1.PolicyBudget{Budget: sessionsv1alpha1.Budget{MaxCost: "1000", MaxTokens: ptr.To[int64](100_000_000), MaxTurns: ptr.To[int32](1000)}},
	}
}
