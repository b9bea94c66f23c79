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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// gateway is OpenClaw's gateway running as a child process on loopback.
type gateway struct {
	URL      string // http://127.0.0.1:<port>
	Token    string
	StateDir string
	cmd      *exec.Cmd
}

// installOpenClaw runs hack/openclaw-npm.sh (a no-op once cached) and returns its directory.
func installOpenClaw() (string, error) {
	cmd := exec.Command(filepath.Join(testenv.RepoRoot(), "hack", "openclaw-npm.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/openclaw-npm.sh: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// startGateway writes a config for a local gateway on a free port with token auth, the
// OpenAI-compatible endpoint on and the stub model as its only model, and starts it on
// stateDir. It returns once GET /health answers.
func startGateway(ctx context.Context, install, stateDir, modelURL string, log io.Writer) (*gateway, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	g := &gateway{URL: "http://127.0.0.1:" + strconv.Itoa(port), Token: hex.EncodeToString(tok), StateDir: stateDir}
	workspace := filepath.Join(stateDir, "workspace")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return nil, err
	}
	cfg := map[string]any{
		"gateway": map[string]any{
			"mode": "local", "port": port, "bind": "loopback",
			"auth":      map[string]any{"mode": "token", "token": g.Token},
			"tailscale": map[string]any{"mode": "off"},
			"http":      map[string]any{"endpoints": map[string]any{"chatCompletions": map[string]any{"enabled": true}}},
		},
		"discovery": map[string]any{"mdns": map[string]any{"mode": "off"}},
		"update":    map[string]any{"checkOnStart": false},
		// The default maxEntries (5000) silently archives the rest of a 10k-session store.
		"session": map[string]any{"notifyOnCreate": false, "maintenance": map[string]any{"maxEntries": 50000}},
		"agents":  map[string]any{"defaults": map[string]any{"workspace": workspace, "model": map[string]any{"primary": "stub/stub-model"}}},
		"models": map[string]any{"mode": "replace", "providers": map[string]any{"stub": map[string]any{
			"baseUrl": modelURL, "apiKey": "x", "api": "openai-completions",
			"models": []any{map[string]any{"id": "stub-model", "name": "stub", "reasoning": false, "input": []string{"text"},
				"cost":          map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
				"contextWindow": 128000, "maxTokens": 4096}},
		}}},
	}
	cfgPath := filepath.Join(stateDir, "openclaw.json")
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		return nil, err
	}
	if err := seedTheirSessions(install, stateDir, cfgPath, listSessions); err != nil {
		return nil, err
	}
	g.cmd = exec.Command(filepath.Join(install, "bin", "node"), filepath.Join(install, "node_modules", "openclaw", "openclaw.mjs"),
		"gateway", "--port", strconv.Itoa(port))
	g.cmd.Dir = stateDir
	g.cmd.Env = append(gatewayEnv(install, stateDir, cfgPath), "OPENCLAW_GATEWAY_TOKEN="+g.Token)
	g.cmd.Stdout, g.cmd.Stderr = log, log
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(g.URL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g, nil
			}
		}
		if g.cmd.ProcessState != nil {
			break
		}
		select {
		case <-ctx.Done():
			g.stop()
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	g.stop()
	return nil, fmt.Errorf("openclaw gateway not healthy on %s after 3m (log: %s)", g.URL, logName(log))
}

// gatewayEnv is the environment OpenClaw runs with: its state and config here, no mDNS, no
// respawn, no channels, no update checks, and Node 24 first on PATH.
func gatewayEnv(install, stateDir, cfgPath string) []string {
	return append(os.Environ(),
		"OPENCLAW_STATE_DIR="+filepath.Join(stateDir, "state"), "OPENCLAW_CONFIG_PATH="+cfgPath,
		"OPENCLAW_DISABLE_BONJOUR=1", "OPENCLAW_NO_RESPAWN=1", "OPENCLAW_SKIP_CHANNELS=1", "OPENCLAW_NO_AUTO_UPDATE=1",
		"HOME="+stateDir, "PATH="+filepath.Join(install, "bin")+":"+os.Getenv("PATH"))
}

// PID is the gateway's process id, for its CPU.
func (g *gateway) PID() int { return g.cmd.Process.Pid }

// stop ends the gateway and every process it started.
func (g *gateway) stop() {
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func logName(w io.Writer) string {
	if f, ok := w.(*os.File); ok {
		return f.Name()
	}
	return "stderr"
}
