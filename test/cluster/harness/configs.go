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
	"os"
	"strings"
)

// GVisor says whether the node offers gVisor: the runtime handler "runsc" for a RuntimeClass
// gvisor (hack/cluster-packages.sh installs Debian's runsc).
func (c Config) GVisor() bool {
	_, err := os.Stat(RunscPath)
	return err == nil
}

// writeConfigs writes containerd's, the CNI bridge's, the kubelet's and kube-proxy's
// configuration. What each setting is for is said beside it.
func (c *Cluster) writeConfigs() error {
	files := map[string]string{
		// Debian's containerd 1.6 with its own root, state and socket; restrict_oom_score_adj
		// because runc cannot lower a container's oom_score_adj below the harness's here
		// ("can't get final child's PID from pipe: EOF" otherwise); network namespaces under
		// the state directory so that they go with it.
		c.path("containerd", "config.toml"): `version = 2
root = "W/containerd/root"
state = "W/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "W/containerd/containerd.sock"
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "W/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "` + SandboxImage + `"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
RUNSC  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "W/cni"
`,
		// One bridge for the node's Pods, addresses from host-local (its state in W).
		c.path("cni", "10-bridge.conflist"): `{
  "cniVersion": "0.4.0",
  "name": "cluster-test",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "W/cni-ipam", "ranges": [[{"subnet": "` + PodCIDR + `"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`,
		// The host has cgroup v1 (failCgroupV1: false) and no systemd (cgroupfs); Pods live
		// under the test's own cgroup; the API server authenticates to the kubelet with its
		// client certificate, everyone else through TokenReview.
		c.path("kubelet.yaml"): `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /` + c.cgroup() + `
containerRuntimeEndpoint: unix://W/containerd/containerd.sock
address: ` + NodeIP + `
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: W/pki/ca.crt}
authorization: {mode: Webhook}
failSwapOn: false
podCIDR: ` + PodCIDR + `
clusterDomain: cluster.local
clusterDNS: [` + NodeIP + `]
resolvConf: /etc/resolv.conf
maxPods: 30
syncFrequency: 10s
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
rotateCertificates: false
serverTLSBootstrap: false
`,
		// iptables mode; no conntrack sysctls (the namespace's are not ours to tune).
		c.path("kube-proxy.yaml"): `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: W/pki/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: ` + PodCIDR + `
hostnameOverride: ` + NodeName + `
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
`,
	}
	runsc := ""
	if c.GVisor() {
		// gVisor, RuntimeClass gvisor's handler: Debian's runsc run by runc's shim through
		// test/cluster/runscwrap, which says why it is needed and what it changes.
		runsc = `    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
        BinaryName = "W/bin/runscwrap"
        SystemdCgroup = false
`
	}
	files[c.path("containerd", "config.toml")] = strings.Replace(files[c.path("containerd", "config.toml")], "RUNSC", runsc, 1)
	for path, body := range files {
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(body, "W/", c.WorkDir+"/")), 0o600); err != nil {
			return err
		}
	}
	return nil
}
