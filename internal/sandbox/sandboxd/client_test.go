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

package sandboxd_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agent-sessions/agent-session-operator/internal/sandbox/sandboxd"
	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

func TestExec(t *testing.T) {
	root := t.TempDir()
	c := testenv.StartSandboxd(t, root)
	ctx := context.Background()
	cases := map[string]struct {
		argv      []string
		cwd       string
		timeout   time.Duration
		limit     int
		stdout    string
		stderr    string
		exit      int32
		truncated bool
		timedOut  bool
	}{
		"echo":           {argv: []string{"sh", "-c", "echo hi; echo err >&2"}, stdout: "hi\n", stderr: "err\n"},
		"exit code":      {argv: []string{"sh", "-c", "exit 3"}, exit: 3},
		"runs in root":   {argv: []string{"pwd"}, stdout: root + "\n"},
		"cwd below root": {argv: []string{"pwd"}, cwd: "sub", stdout: filepath.Join(root, "sub") + "\n"},
		"flood is cut":   {argv: []string{"sh", "-c", "yes"}, limit: 1000, truncated: true, exit: -1},
		"timeout kills":  {argv: []string{"sleep", "30"}, timeout: 500 * time.Millisecond, timedOut: true, exit: -1},
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			timeout, limit := tc.timeout, tc.limit
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			if limit == 0 {
				limit = 1 << 10
			}
			began := time.Now()
			res, err := c.Exec(ctx, tc.argv, tc.cwd, timeout, limit)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tc.exit || res.Truncated != tc.truncated || res.TimedOut != tc.timedOut {
				t.Errorf("exit %d truncated %v timedOut %v; want %d %v %v", res.ExitCode, res.Truncated, res.TimedOut, tc.exit, tc.truncated, tc.timedOut)
			}
			if tc.truncated {
				if len(res.Stdout) != limit {
					t.Errorf("stdout %d bytes, want cut at %d", len(res.Stdout), limit)
				}
				return
			}
			if res.Stdout != tc.stdout || res.Stderr != tc.stderr {
				t.Errorf("stdout %q stderr %q; want %q %q", res.Stdout, res.Stderr, tc.stdout, tc.stderr)
			}
			if tc.timedOut && time.Since(began) > 15*time.Second {
				t.Errorf("timeout took %v", time.Since(began))
			}
		})
	}
	// A cwd that leaves the root is sandboxd's to refuse.
	if _, err := c.Exec(ctx, []string{"pwd"}, "../", 10*time.Second, 100); err == nil {
		t.Error("exec with cwd ../ ran; want it refused")
	}
}

func TestFiles(t *testing.T) {
	root := t.TempDir()
	c := testenv.StartSandboxd(t, root)
	ctx := context.Background()
	if err := c.Write(ctx, "dir/a.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	got, more, err := c.Read(ctx, "dir/a.txt", 100)
	if err != nil || string(got) != "hello" || more {
		t.Fatalf("Read = %q, %v, %v", got, more, err)
	}
	got, more, err = c.Read(ctx, "dir/a.txt", 3)
	if err != nil || string(got) != "hel" || !more {
		t.Errorf("bounded Read = %q, %v, %v; want hel, true", got, more, err)
	}
	if _, _, err := c.Read(ctx, "dir/missing", 10); !sandboxd.IsNotFound(err) {
		t.Errorf("Read missing: %v, want not found", err)
	}
	if _, _, err := c.Read(ctx, "dir", 10); err == nil {
		t.Error("Read of a directory: want an error")
	}
	for i := range 5 {
		if err := c.Write(ctx, "many/f"+strconv.Itoa(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	entries, more, err := c.List(ctx, "many", 3)
	if err != nil || len(entries) != 3 || !more || entries[0].Name != "f0" {
		t.Errorf("List = %+v, %v, %v; want 3 of 5, more", entries, more, err)
	}
	entries, _, err = c.List(ctx, ".", 100)
	if err != nil || len(entries) != 2 {
		t.Errorf("List root = %+v, %v", entries, err)
	}

	// Confinement is sandboxd's too, whatever the manager passes: a link out and a path up.
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if b, _, err := c.Read(ctx, "link", 100); !sandboxd.IsOutside(err) {
		t.Errorf("Read through a link out = %q, %v; want refused", b, err)
	}
	if err := c.Write(ctx, "link", []byte("x")); !sandboxd.IsOutside(err) {
		t.Errorf("Write through a link out: %v; want refused", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "secret" {
		t.Errorf("the file outside was changed: %q", b)
	}
	if b, _, err := c.Read(ctx, "../"+filepath.Base(root), 100); err == nil {
		t.Errorf("Read ../ = %q; want refused", b)
	}
	entries, _, _ = c.List(ctx, ".", 100)
	for _, e := range entries {
		if e.Name == "link" {
			t.Errorf("List shows the link out: %+v", e)
		}
	}
}

// Health answers once sandboxd serves, and fails while nothing listens (a Pod Ready before
// its sandboxd is).
func TestHealth(t *testing.T) {
	c := testenv.StartSandboxd(t, t.TempDir())
	ctx := context.Background()
	if err := c.Health(ctx); err != nil {
		t.Fatalf("Health of a serving sandboxd: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	none, err := sandboxd.New(func(ctx context.Context, _ int) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if err := none.Health(ctx); err == nil {
		t.Error("Health of nothing listening: nil, want an error")
	}
}
