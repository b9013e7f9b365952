#!/usr/bin/env bash
# Lifecycle script for SageMaker HyperPod nodes (lifecycle or managed Slurm mode).
#
# HyperPod copies the lifecycle prefix to /tmp/<bucket>/<prefix>/ and runs this script from
# there as root. It logs to /var/log/provision/provisioning.log (shipped to CloudWatch by
# the node's agent) and runs provision.py in the mode the parameters file beside it names:
# provisioning_parameters.json -> lifecycle mode (the scripts configure Slurm),
# fmp_node_setup.json -> managed mode (HyperPod configures Slurm; see provision.py).
# Exactly one of the two must be there. Extra arguments are passed to provision.py (e.g.
# --root DIR --dry-run for a rehearsal). Nothing from /tmp is needed after a reboot: the FSx
# fstab entry, the slurmd settings, the accounts and the enabled systemd units all live
# under /etc, the homes and keys on the shared file system.
#
# Environment: PROVISION_LOG_DIR (default /var/log/provision), PROVISION_FAILURE_SLEEP
# (seconds to wait before exiting on failure so the log ships; default 60).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log_dir="${PROVISION_LOG_DIR:-/var/log/provision}"
failure_sleep="${PROVISION_FAILURE_SLEEP:-60}"

mkdir -p "$log_dir"
exec > >(tee -a "$log_dir/provisioning.log") 2>&1

fail() {
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) on_create: ERROR: $*"
  echo "on_create: waiting ${failure_sleep}s so this log reaches CloudWatch"
  sleep "$failure_sleep"
  exit 1
}

echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) on_create: starting in $here"

python=""
for candidate in python3 /usr/bin/python3 /usr/local/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1; then
    python="$(command -v "$candidate")"
    break
  fi
done
[[ -n "$python" ]] || fail "no python3 found on this node"

params="$here/provisioning_parameters.json"
node_setup="$here/fmp_node_setup.json"
if [[ -f "$params" && -f "$node_setup" ]]; then
  fail "both $params and $node_setup are in the lifecycle prefix: keep the one for the cluster's Slurm mode"
elif [[ -f "$params" ]]; then
  mode=(--params "$params")
elif [[ -f "$node_setup" ]]; then
  mode=(--node-setup "$node_setup")
else
  fail "neither $params (lifecycle mode) nor $node_setup (managed mode) is in the lifecycle prefix"
fi

if "$python" "$here/provision.py" "${mode[@]}" "$@"; then
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) on_create: finished"
else
  fail "provision.py exited with code $?; see the lines above"
fi
