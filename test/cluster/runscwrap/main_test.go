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
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOwnSandbox(t *testing.T) {
	type spec struct {
		Hostname    string            `json:"hostname,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	cases := map[string]struct {
		args    func(bundle string) []string
		in, out spec
	}{
		"a Pod's container becomes its own sandbox with the Pod's hostname": {
			args: func(b string) []string {
				return []string{"--root", "/r", "create", "--bundle", b, "--pid-file", "p", "id"}
			},
			in: spec{Annotations: map[string]string{"io.kubernetes.cri.container-type": "container",
				"io.kubernetes.cri.sandbox-id": "abc", "io.kubernetes.cri.container-name": "sandbox"}},
			out: spec{Hostname: "coder-main", Annotations: map[string]string{"io.kubernetes.cri.container-name": "sandbox"}},
		},
		"--bundle=": {
			args: func(b string) []string { return []string{"create", "--bundle=" + b, "id"} },
			in:   spec{Hostname: "kept", Annotations: map[string]string{"io.kubernetes.cri.container-type": "sandbox"}},
			out:  spec{Hostname: "kept", Annotations: map[string]string{}},
		},
		"not create: untouched": {
			args: func(b string) []string { return []string{"start", "--bundle", b, "id"} },
			in:   spec{Annotations: map[string]string{"io.kubernetes.cri.container-type": "container"}},
			out:  spec{Annotations: map[string]string{"io.kubernetes.cri.container-type": "container"}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			hostname := filepath.Join(dir, "hostname")
			if err := os.WriteFile(hostname, []byte("coder-main\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(c.in)
			var full map[string]any
			_ = json.Unmarshal(raw, &full)
			full["mounts"] = []any{map[string]any{"destination": "/etc/hostname", "source": hostname}}
			raw, _ = json.Marshal(full)
			if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := ownSandbox(c.args(dir)); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
			var got spec
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Annotations == nil {
				got.Annotations = map[string]string{}
			}
			want := c.out
			if want.Annotations == nil {
				want.Annotations = map[string]string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}
