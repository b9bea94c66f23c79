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

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// runNodeJSON runs a Node script that prints its result as JSON on its last line, trusting
// the history listener's CA, and decodes that line into out.
func runNodeJSON(node, script string, out any, args ...string) {
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+cluster.HistoryCAFile)
	b, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(b))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	Expect(json.Unmarshal([]byte(lines[len(lines)-1]), out)).To(Succeed(), string(b))
}

// nodeScript writes src, its "SDK" replaced by the directory sdk picks from the installed
// npm packages, as a script named name, and returns the Node binary and the script's path.
func nodeScript(name, src string, sdk func(testenv.MCPPackages) string) (string, string) {
	pkgs, err := testenv.MCPNPM()
	Expect(err).NotTo(HaveOccurred())
	script := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.WriteFile(script, []byte(strings.ReplaceAll(src, "SDK", sdk(pkgs))), 0o600)).To(Succeed())
	return pkgs.Node(), script
}
