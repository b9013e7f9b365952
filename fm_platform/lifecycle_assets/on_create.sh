#!/usr/bin/env bash
# OnCreate script for SageMaker HyperPod nodes (classic Slurm mode).
#
# HyperPod copies the lifecycle prefix to /tmp/<bucket>/<prefix>/ and runs this script from
# there as root. It logs to /var/log/provision/provisioning.log (shipped to CloudWatch by
# the node's agent) and runs provision.py with the provisioning_parameters.json beside it.
# Extra arguments are passed to provision.py (e.g. --root DIR --dry-run for a rehearsal).
# Nothing from /tmp is needed after a reboot: the FSx fstab entry, the slurmd settings and
# the enabled systemd units all live under /etc.
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
[[ -f "$params" ]] || fail "$params is missing from the lifecycle prefix"

if "$python" "$here/provision.py" --params "$params" "$@"; then
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) on_create: finished"
else
  fail "provision.py exited with code $?; see the lines above"
fi
