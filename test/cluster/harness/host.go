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

package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agent-sessions/agent-session-operator/test/cluster/images"
)

const cgroupRoot = "/sys/fs/cgroup"

// Prepare is the outer run up to the inner one: it builds what the cluster needs while the
// Go module proxy is still reachable (the namespace has no way out), then creates the
// network namespace and the cgroup.
func Prepare(repoRoot string) (Config, error) {
	if os.Geteuid() != 0 {
		return Config{}, errors.New("the cluster test runs a kubelet and containerd: it needs root")
	}
	for _, script := range []string{"hack/cluster-packages.sh"} {
		if out, err := run(repoRoot, filepath.Join(repoRoot, script)); err != nil {
			return Config{}, fmt.Errorf("%s: %v\n%s", script, err, out)
		}
	}
	var k8sBin string
	for _, script := range []string{"hack/envtest-binaries.sh", "hack/cluster-binaries.sh"} {
		out, err := run(repoRoot, filepath.Join(repoRoot, script))
		if err != nil {
			return Config{}, fmt.Errorf("%s: %v\n%s", script, err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		k8sBin = lines[len(lines)-1]
	}
	work, err := os.MkdirTemp("", "aso-cluster-")
	if err != nil {
		return Config{}, err
	}
	c := Config{ID: randomHex(3), WorkDir: work, RepoRoot: repoRoot, K8sBin: k8sBin}
	if err := c.buildImages(); err != nil {
		return c, err
	}
	if err := c.createNetns(); err != nil {
		return c, err
	}
	return c, c.createCgroup()
}

// buildImages builds the operator's binaries as the Dockerfile does and writes two tags of
// its image (the second for the upgrade), the Pod sandbox (pause) image, agent-sandbox's
// controller and the default sandbox image (sandboxd and Debian's static busybox).
func (c Config) buildImages() error {
	bin := c.path("bin")
	if err := c.copySandboxBinaries(bin); err != nil {
		return err
	}
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin+"/",
		"./cmd/manager", "./cmd/transcript-store", "./test/cluster/pause", "./test/cluster/runscwrap")
	build.Dir = c.RepoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the image's binaries: %v\n%s", err, out)
	}
	if err := os.MkdirAll(c.path("images"), 0o755); err != nil {
		return err
	}
	for _, tag := range []string{"v1", "v2"} {
		if err := images.WriteTarball(images.Operator, bin, OperatorImage+":"+tag, c.ImageTarball(tag)); err != nil {
			return err
		}
	}
	for _, img := range []struct {
		spec     images.Spec
		ref, tag string
	}{
		{images.Pause, SandboxImage, "pause"},
		{images.Sandbox, SandboxRuntimeImage, "sandbox"},
		{images.SandboxController, SandboxControllerImage, "agent-sandbox-controller"},
	} {
		if err := images.WriteTarball(img.spec, bin, img.ref, c.ImageTarball(img.tag)); err != nil {
			return err
		}
	}
	return nil
}

// copySandboxBinaries puts agent-sandbox's controller and sandboxd (hack/agent-sandbox.sh
// builds them once per machine from the module proxy) and the static busybox into bin.
func (c Config) copySandboxBinaries(bin string) error {
	out, err := run(c.RepoRoot, filepath.Join(c.RepoRoot, "hack", "agent-sandbox.sh"), "bin")
	if err != nil {
		return fmt.Errorf("hack/agent-sandbox.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	dir := lines[len(lines)-1]
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	for name, src := range map[string]string{
		"agent-sandbox-controller": filepath.Join(dir, "agent-sandbox-controller"),
		"sandboxd":                 filepath.Join(dir, "sandboxd"),
		"busybox":                  "/bin/busybox",
	} {
		body, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("%s (hack/cluster-packages.sh installs busybox-static): %w", src, err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), body, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// createNetns makes the namespace the whole cluster lives in: a veth pair with the node's
// address on one end, a default route into it (so service addresses route and are then
// rewritten by kube-proxy), forwarding for the Pods' bridge.
func (c Config) createNetns() error {
	ns := c.netns()
	steps := [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "-n", ns, "link", "set", "lo", "up"},
		{"ip", "-n", ns, "link", "add", "node0", "type", "veth", "peer", "name", "node1"},
		{"ip", "-n", ns, "addr", "add", nodeCIDR, "dev", "node0"},
		{"ip", "-n", ns, "link", "set", "node0", "up"},
		{"ip", "-n", ns, "link", "set", "node1", "up"},
		{"ip", "-n", ns, "route", "add", "default", "dev", "node0"},
		{"ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"},
		{"ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.bridge.bridge-nf-call-iptables=1"},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	return nil
}

// hierarchies are the mounted cgroup v1 hierarchies (and the v2 one of a hybrid host).
func hierarchies() []string {
	entries, _ := os.ReadDir(cgroupRoot)
	var hs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(cgroupRoot, e.Name(), "cgroup.procs")); err == nil {
			hs = append(hs, filepath.Join(cgroupRoot, e.Name()))
		}
	}
	return hs
}

// createCgroup makes /aso-<id> in every hierarchy: the inner run and everything it starts
// live there, and the kubelet puts its Pods under it (cgroupRoot), so killing the members of
// that one tree ends every process the test started, shims and containers included.
func (c Config) createCgroup() error {
	for _, h := range hierarchies() {
		dir := filepath.Join(h, c.cgroup())
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		if filepath.Base(h) == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				v, err := os.ReadFile(filepath.Join(h, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c Config) joinCgroup(pid int) error {
	for _, h := range hierarchies() {
		if err := os.WriteFile(filepath.Join(h, c.cgroup(), "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("cgroup %s: %w", h, err)
		}
	}
	return nil
}

// RunInner runs this test binary again inside the network namespace and a private mount
// namespace (the mounts of containerd and the kubelet vanish with their processes), bounded
// by timeout. It returns the inner run's exit code.
func (c Config) RunInner(timeout time.Duration) int {
	args := append([]string{"--net=/run/netns/" + c.netns(), "--", "unshare", "--mount", "--propagation", "private", "--", os.Args[0]}, os.Args[1:]...)
	cmd := exec.Command("nsenter", args...)
	cmd.Env = append(os.Environ(), c.environ()...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cluster test: starting the inner run:", err)
		return 1
	}
	if err := c.joinCgroup(cmd.Process.Pid); err != nil {
		fmt.Fprintln(os.Stderr, "cluster test:", err)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			return 1
		}
		return 0
	case <-time.After(timeout):
		fmt.Fprintf(os.Stderr, "cluster test: the inner run took longer than %s; stopping it\n", timeout)
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "cluster test: %s; stopping\n", s)
	}
	_ = cmd.Process.Kill()
	<-done
	return 1
}

// Teardown ends every process of the test, removes its cgroups, network namespace, mounts
// and files. It is safe to call after any partial Prepare.
func (c Config) Teardown() []error {
	var errs []error
	if c.ID != "" {
		if err := c.killAll(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
		if err := c.removeCgroups(); err != nil {
			errs = append(errs, err)
		}
		if _, err := os.Stat("/run/netns/" + c.netns()); err == nil {
			if out, err := exec.Command("ip", "netns", "del", c.netns()).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("ip netns del: %v: %s", err, out))
			}
		}
	}
	if c.WorkDir != "" {
		if err := unmountUnder(c.WorkDir); err != nil {
			errs = append(errs, err)
		}
		if os.Getenv(envPrefix+"KEEP") == "" {
			if err := os.RemoveAll(c.WorkDir); err != nil {
				errs = append(errs, err)
			}
		} else {
			fmt.Fprintln(os.Stderr, "cluster test: kept", c.WorkDir)
		}
	}
	return errs
}

// killAll SIGKILLs every process in the test's cgroup tree until none is left.
func (c Config) killAll(bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		pids := c.members()
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes still alive after %s: %v", bound, pids)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// members lists the processes of the test's cgroup tree in the pids hierarchy.
func (c Config) members() []int {
	var pids []int
	root := filepath.Join(cgroupRoot, "pids", c.cgroup())
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// removeCgroups removes the test's cgroup tree, deepest first, in every hierarchy.
func (c Config) removeCgroups() error {
	var errs []error
	for _, h := range hierarchies() {
		root := filepath.Join(h, c.cgroup())
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			var err error
			// A cgroup whose last process just died may stay busy for a moment.
			for i := 0; i < 50; i++ {
				if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder lazily unmounts whatever is still mounted below dir in this mount namespace.
func unmountUnder(dir string) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var targets []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir) {
			targets = append(targets, f[4])
		}
	}
	sort.Slice(targets, func(i, j int) bool { return len(targets[i]) > len(targets[j]) })
	var errs []error
	for _, t := range targets {
		if err := syscall.Unmount(t, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("umount %s: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

func run(dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	return string(out), err
}
