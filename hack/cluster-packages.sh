#!/usr/bin/env bash
# Installs the node packages the cluster test runs Pods with (Debian: containerd, runc, the
# CNI plugins, iproute2, iptables), only when one is missing. Needs root, as the test does.
set -euo pipefail

need=()
command -v containerd >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
[[ -x /usr/lib/cni/bridge || -x /opt/cni/bin/bridge ]] || need+=(containernetworking-plugins)
command -v ip >/dev/null || need+=(iproute2)
command -v iptables >/dev/null || need+=(iptables)
command -v mount >/dev/null || need+=(mount)
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
