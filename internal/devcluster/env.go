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

package devcluster

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// EnvFile is the name, in the state directory, of the shell file that gives another terminal
// the local cluster: source it and kubectl, kubectl sessions and the history and metrics
// addresses work as docs/getting-started.md shows. The ports change on each start; the file follows them.
const EnvFile = "env"

// EnvPath is where Start wrote EnvFile.
func (c *Cluster) EnvPath() string { return filepath.Join(c.opts.StateDir, EnvFile) }

// writeEnv writes EnvFile: absolute paths and loopback URLs, quoted for sh.
func (c *Cluster) writeEnv() error {
	path := []string{testenv.Assets()}
	if c.opts.BinDir != "" {
		bin, err := filepath.Abs(c.opts.BinDir)
		if err != nil {
			return err
		}
		path = append([]string{bin}, path...)
	}
	lines := []string{
		"# Written by make run-local for this run; source it in another terminal.",
		"export KUBECONFIG=" + shQuote(c.Kubeconfig),
		"export PATH=" + shQuote(strings.Join(path, ":")) + `:"$PATH"`,
	}
	if c.HistoryAddr != "" {
		lines = append(lines, "export AGENT_SESSIONS_HISTORY_URL="+shQuote(c.HistoryURL()))
		if c.HistoryCAFile != "" {
			lines = append(lines, "export AGENT_SESSIONS_HISTORY_CA="+shQuote(c.HistoryCAFile))
		}
		lines = append(lines, "export AGENT_SESSIONS_MCP_URL="+shQuote(c.MCPURL("default")))
	}
	if c.Token != "" {
		// The file is the local admin's, mode 0600, like the kubeconfig that holds the same token.
		lines = append(lines, "export AGENT_SESSIONS_TOKEN="+shQuote(c.Token))
	}
	if c.MetricsAddr != "" {
		lines = append(lines, "export AGENT_SESSIONS_METRICS_URL="+shQuote("https://"+c.MetricsAddr+"/metrics"))
	}
	if c.EverythingURL != "" {
		lines = append(lines, "export AGENT_SESSIONS_EVERYTHING_URL="+shQuote(c.EverythingURL))
	}
	return os.WriteFile(c.EnvPath(), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// shQuote quotes s for sh: single quotes, with any single quote spliced in.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
