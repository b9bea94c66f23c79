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

// Command runscwrap runs Debian's runsc (gVisor) for containerd's runc shim, which is all the
// cluster test's node has: Debian ships runsc without gVisor's own shim
// (containerd-shim-runsc-v1). The runc shim runs it as it runs runc; two things then go
// wrong, and this wrapper mends both before it executes runsc:
//
//   - runsc's own network stack refuses to start: Debian's runsc (2022-12-19) takes every
//     network namespace for the host's on Linux 6.x ("cannot run with network enabled in root
//     network namespace": it tells the root namespace by /proc/sys/net/core/rmem_default,
//     which every namespace has now). So runsc gets --network=host: the sandbox uses the
//     network of the Pod's own namespace, which it joins, through the host kernel (the
//     kubelet's port-forward reaches a sandbox's loopback this way too).
//   - a Pod's container never starts in the gVisor sandbox of its Pod: runsc starts it as a
//     container of the sandbox its CRI annotations name, and runc's shim then waits until
//     the kubelet's two-minute deadline ("context deadline exceeded"). So `create` drops
//     those annotations from the bundle's config.json: each container is a gVisor sandbox
//     of its own, in the Pod's namespaces, which runc's shim runs as it runs the Pod's pause.
//     A sandbox of its own does not share the Pod's UTS namespace either, so the container's
//     spec gets the Pod's hostname, from the /etc/hostname file CRI mounts into it.
//   - runc's shim takes "container not running" from a kill as done; runsc says "sandbox is
//     not running" of a gVisor sandbox whose process has exited, which the shim takes for a
//     failure, and the Pod never finishes terminating. So a kill's answer is translated.
//
// runsc's debug logs go to logs/runsc/ of the cluster's work directory, beside this binary's
// bin/.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

const runsc = "/usr/bin/runsc"

// criAnnotations make runsc start a container inside its Pod's sandbox.
var criAnnotations = []string{"io.kubernetes.cri.container-type", "io.kubernetes.cri.sandbox-id"}

func main() {
	args := os.Args[1:]
	if err := ownSandbox(args); err != nil {
		fmt.Fprintln(os.Stderr, "runscwrap:", err)
		os.Exit(128)
	}
	flags := []string{runsc, "--network=host"}
	if exe, err := os.Executable(); err == nil {
		flags = append(flags, "--debug-log="+filepath.Join(filepath.Dir(filepath.Dir(exe)), "logs", "runsc")+"/")
	}
	if isKill(args) {
		os.Exit(kill(append(flags, args...)))
	}
	if err := syscall.Exec(runsc, append(flags, args...), os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, "runscwrap:", err)
		os.Exit(128)
	}
}

// ownSandbox removes the CRI annotations from the bundle of a create command.
func ownSandbox(args []string) error {
	create, bundle := false, ""
	for i, a := range args {
		switch {
		case a == "create":
			create = true
		case (a == "--bundle" || a == "-b") && i+1 < len(args):
			bundle = args[i+1]
		case len(a) > len("--bundle=") && a[:len("--bundle=")] == "--bundle=":
			bundle = a[len("--bundle="):]
		}
	}
	if !create || bundle == "" {
		return nil
	}
	path := filepath.Join(bundle, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ann, _ := spec["annotations"].(map[string]any)
	changed := false
	for _, k := range criAnnotations {
		if _, ok := ann[k]; ok {
			delete(ann, k)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if h, _ := spec["hostname"].(string); h == "" {
		if h := podHostname(spec); h != "" {
			spec["hostname"] = h
		}
	}
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

// podHostname is the content of the file CRI mounts at /etc/hostname, "" when none.
func podHostname(spec map[string]any) string {
	mounts, _ := spec["mounts"].([]any)
	for _, m := range mounts {
		mount, _ := m.(map[string]any)
		if dest, _ := mount["destination"].(string); dest != "/etc/hostname" {
			continue
		}
		src, _ := mount["source"].(string)
		b, err := os.ReadFile(src)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	return ""
}

func isKill(args []string) bool {
	for _, a := range args {
		if a == "kill" {
			return true
		}
		if a == "create" || a == "start" || a == "delete" || a == "state" {
			return false
		}
	}
	return false
}

// kill runs runsc's kill and says of a sandbox that is not running what runc says of a
// container that is not running, so that runc's shim takes the kill as done.
func kill(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		_, _ = os.Stdout.Write(out)
		return 0
	}
	if strings.Contains(string(out), "is not running") {
		fmt.Fprintf(os.Stderr, "container not running (runsc: %s)\n", strings.TrimSpace(string(out)))
		return 1
	}
	_, _ = os.Stderr.Write(out)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	return 128
}
