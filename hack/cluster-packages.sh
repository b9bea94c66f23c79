#!/usr/bin/env bash
# Copyright 2026 The agent-session-operator Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Installs the node packages the cluster test runs Pods with (Debian: containerd, runc, the
# CNI plugins, iproute2, iptables; runsc, gVisor, for the sandboxes' RuntimeClass gvisor;
# busybox-static, the shell and coreutils of the sandbox image), only when one is missing.
# Needs root, as the test does.
set -euo pipefail

need=()
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
[[ -x /usr/lib/cni/bridge || -x /opt/cni/bin/bridge ]] || need+=(containernetworking-plugins)
command -v ip >/dev/null || need+=(iproute2)
command -v iptables >/dev/null || need+=(iptables)
command -v mount >/dev/null || need+=(mount)
command -v runsc >/dev/null || need+=(runsc)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
if ((${#need[@]} == 0)); then
  exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
  echo "cluster-packages: need root to install ${need[*]}" >&2
  exit 1
fi
echo "cluster-packages: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
