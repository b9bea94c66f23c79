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
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is one child: its output is copied line by line with a name prefix.
type process struct {
	name, path string
	args       []string
	env        []string // added to this process's environment
	cmd        *exec.Cmd
	done       chan struct{}
	err        error
}

func (p *process) start(_ context.Context, log io.Writer) error {
	// Not CommandContext: stop decides how a child ends (SIGTERM first, so it drains).
	p.cmd = exec.Command(p.path, p.args...)
	if len(p.env) > 0 {
		p.cmd.Env = append(os.Environ(), p.env...)
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p.cmd.Stderr = p.cmd.Stdout
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.done = make(chan struct{})
	var copied sync.WaitGroup
	copied.Go(func() { prefixLines(log, out, p.name) })
	go func() {
		copied.Wait()
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return nil
}

// Exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

func (p *process) stop(grace time.Duration) {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	if done, _ := p.exited(); done {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *process) runToEnd(ctx context.Context, out io.Writer) error {
	cmd := exec.CommandContext(ctx, p.path, p.args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w", p.name, p.args, err)
	}
	return nil
}

var logMu sync.Mutex

func prefixLines(w io.Writer, r io.Reader, name string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		logMu.Lock()
		fmt.Fprintf(w, "[%s] %s\n", name, sc.Text())
		logMu.Unlock()
	}
}

// waitHTTP polls url until it answers 200 or the timeout passes (a readiness wait at start-up,
// not a test assertion).
func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s (last error: %v)", url, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
