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
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// MCPPackages are the npm packages the MCP tests run: Node 22, the official conformance
// suite and the reference "everything" server, installed by hack/mcp-npm.sh into a cache
// outside the repo (once per machine).
type MCPPackages struct {
	Dir string
}

// Node is the Node 22 binary.
func (p MCPPackages) Node() string { return filepath.Join(p.Dir, "bin", "node") }

// Conformance is the conformance suite's entry script (run it with Node).
func (p MCPPackages) Conformance() string {
	return filepath.Join(p.Dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
}

// ConformanceNext is the entry script of the newer suite installed beside it (0.2.0
// alpha), which scores the 2026-07-28 revision.
func (p MCPPackages) ConformanceNext() string {
	return filepath.Join(p.Dir, "node_modules", "conformance-next", "dist", "index.js")
}

// Everything is the everything server's entry script (run it with Node).
func (p MCPPackages) Everything() string {
	return filepath.Join(p.Dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// SDKClient is the directory of the TypeScript SDK's client modules (ESM), to import
// index.js and streamableHttp.js from.
func (p MCPPackages) SDKClient() string {
	return filepath.Join(p.Dir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client")
}

// A2ASDK is the A2A JavaScript SDK's dist directory (ESM), to import client/index.js and
// server/index.js from.
func (p MCPPackages) A2ASDK() string {
	return filepath.Join(p.Dir, "node_modules", "@a2a-js", "sdk", "dist")
}

var (
	mcpOnce sync.Once
	mcpPkgs MCPPackages
	mcpErr  error
)

// MCPNPM installs the MCP test packages when they are missing and says where they are.
func MCPNPM() (MCPPackages, error) {
	mcpOnce.Do(func() {
		var out, errOut bytes.Buffer
		cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "mcp-npm.sh"))
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			mcpErr = fmt.Errorf("hack/mcp-npm.sh: %w\n%s", err, errOut.String())
			return
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		mcpPkgs = MCPPackages{Dir: lines[len(lines)-1]}
		if _, err := os.Stat(mcpPkgs.Node()); err != nil {
			mcpErr = fmt.Errorf("hack/mcp-npm.sh left no Node binary: %w", err)
		}
	})
	return mcpPkgs, mcpErr
}

// StartEverything runs the reference everything MCP server over streamable HTTP on a free
// loopback port (PORT in its environment, as it reads it) and waits until it listens. It
// returns the server's URL and a stop function.
func StartEverything(log io.Writer) (string, func(), error) {
	pkgs, err := MCPNPM()
	if err != nil {
		return "", nil, err
	}
	addr, stop, err := startListening("the everything server", log, func(port string) *exec.Cmd {
		cmd := exec.Command(pkgs.Node(), pkgs.Everything(), "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
		return cmd
	})
	if err != nil {
		return "", nil, err
	}
	return "http://" + addr + "/mcp", stop, nil
}

// startListening starts the command build makes for a free loopback port, its output to
// log, and waits until something listens on that port. It returns the address and a stop
// function.
func startListening(what string, log io.Writer, build func(port string) *exec.Cmd) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cmd := build(strings.TrimPrefix(addr, "127.0.0.1:"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	var dialErr error
	listening := func(context.Context) (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if dialErr = err; err != nil {
			return false, nil
		}
		_ = c.Close()
		return true, nil
	}
	if err := wait.PollUntilContextTimeout(context.Background(), Interval, Timeout, true, listening); err != nil {
		stop()
		return "", nil, fmt.Errorf("%s did not listen on %s: %w", what, addr, dialErr)
	}
	return addr, stop, nil
}
