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

// Package krew installs the kubectl plugin as a person would with krew: from the manifest
// make krew-manifest writes and an archive make release-archives writes, with the krew
// binary hack/krew.sh builds once per machine, then runs it through the real kubectl.
package krew

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

const version = "v0.1.0"

// TestKrewInstall builds this platform's release archive twice (the sums must agree: the
// manifest's sha256 is only worth something if a release can be rebuilt), writes the krew
// manifest from it, installs the plugin with krew into a fresh KREW_ROOT and runs
// "kubectl sessions --help" with KREW_ROOT/bin on PATH. An archive that differs from the
// manifest's sum by one byte is refused.
func TestKrewInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the plugin and krew")
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skipf("the plugin is released for linux and darwin, not %s", runtime.GOOS)
	}
	kubectl := filepath.Join(testenv.Assets(), "kubectl")
	if testenv.Assets() == "" {
		t.Skip(testenv.SkipReason)
	}
	krew := filepath.Join(testenv.ToolDir(t, "hack/krew.sh"), "krew")
	root, tmp := testenv.RepoRoot(), t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	archive := "kubectl-sessions_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"

	release, again := filepath.Join(tmp, "release"), filepath.Join(tmp, "again")
	for _, dir := range []string{release, again} {
		testenv.Run(t, root, nil, "hack/release-archives.sh", dir, version, platform)
	}
	if a, b := readFile(t, release, "sha256sums.txt"), readFile(t, again, "sha256sums.txt"); a != b {
		t.Errorf("two builds of the same source differ:\n%s\n%s", a, b)
	}
	manifest := filepath.Join(tmp, "plugins", "sessions.yaml")
	writeFile(t, manifest, testenv.Run(t, root, nil, "hack/krew-manifest.sh", release, version))
	for _, want := range []string{
		"uri: https://github.com/agent-sessions/agent-session-operator/releases/download/" + version + "/" + archive,
		"os: " + runtime.GOOS, "arch: " + runtime.GOARCH, "bin: kubectl-sessions",
	} {
		if !strings.Contains(readFile(t, manifest), want) {
			t.Errorf("the manifest lacks %q:\n%s", want, readFile(t, manifest))
		}
	}

	t.Run("refuses an archive whose sum differs", func(t *testing.T) {
		tampered := filepath.Join(tmp, archive)
		writeFile(t, tampered, readFile(t, release, archive)+"\n")
		env := []string{"KREW_ROOT=" + filepath.Join(tmp, "krew-tampered")}
		_, err := testenv.RunErr(tmp, env, krew, "install", "--manifest="+manifest, "--archive="+tampered)
		var ce *testenv.CommandError
		if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "checksum does not match") {
			t.Fatalf("krew install of a tampered archive: %v; want a checksum mismatch", err)
		}
	})

	krewRoot := filepath.Join(tmp, "krew")
	env := []string{"KREW_ROOT=" + krewRoot}
	testenv.Run(t, tmp, env, krew, "install", "--manifest="+manifest, "--archive="+filepath.Join(release, archive))
	// krew list needs a plugin index, which a manifest install does not fetch: its receipt
	// is what krew upgrade and uninstall go by.
	if receipt := readFile(t, krewRoot, "receipts", "sessions.yaml"); !strings.Contains(receipt, "version: "+version) {
		t.Errorf("krew's receipt for sessions lacks version %s:\n%s", version, receipt)
	}
	path := []string{"PATH=" + filepath.Join(krewRoot, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")}
	help := testenv.Run(t, tmp, path, kubectl, "sessions", "--help")
	for _, want := range []string{"kubectl sessions drives the agent-session-operator", "kubectl sessions [command]", "history", "send", "spawn"} {
		if !strings.Contains(help, want) {
			t.Errorf("kubectl sessions --help lacks %q:\n%s", want, help)
		}
	}
	if plugins := testenv.Run(t, tmp, path, kubectl, "plugin", "list", "--name-only"); !strings.Contains(plugins, "kubectl-sessions") {
		t.Errorf("kubectl plugin list does not show kubectl-sessions:\n%s", plugins)
	}
}

func readFile(t *testing.T, path ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(path...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
