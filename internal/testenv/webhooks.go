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
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// WithWebhooksExcept is WithWebhooks without the webhooks named, as an install that leaves
// them out (one shard: shard.LabelWebhooks). Each name must be one of config/webhook's, so
// that a renamed webhook is not installed unnoticed.
func WithWebhooksExcept(names ...string) (Option, error) {
	raw, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "webhook", "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	var o envtest.WebhookInstallOptions
	found := map[string]bool{}
	keep := func(name string) bool {
		drop := slices.Contains(names, name)
		found[name] = found[name] || drop
		return !drop
	}
	for doc := range bytes.SplitSeq(raw, []byte("\n---\n")) {
		var t metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &t); err != nil {
			return nil, err
		}
		switch t.Kind {
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(doc, c); err != nil {
				return nil, err
			}
			c.Webhooks = slices.DeleteFunc(c.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return !keep(w.Name) })
			o.MutatingWebhooks = append(o.MutatingWebhooks, c)
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(doc, c); err != nil {
				return nil, err
			}
			c.Webhooks = slices.DeleteFunc(c.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return !keep(w.Name) })
			o.ValidatingWebhooks = append(o.ValidatingWebhooks, c)
		}
	}
	for _, n := range names {
		if !found[n] {
			return nil, fmt.Errorf("config/webhook has no webhook %q", n)
		}
	}
	return func(e *envtest.Environment) { e.WebhookInstallOptions = o }, nil
}
