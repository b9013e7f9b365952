#!/usr/bin/env python3
"""Provision one SageMaker HyperPod node for classic Slurm mode.

Run by on_create.sh as root. Steps: find this node's role from resource_config.json and
provisioning_parameters.json, mount FSx for Lustre (fstab entry, retries, write check),
prepare the shared directories on it, then start the role's Slurm daemon with systemd; the
controller first waits for the slurm.conf the HyperPod agent writes (login and compute nodes
run configless: slurmd fetches the configuration from the controller, so they may have no
local slurm.conf). Nothing is downloaded.

Test mode: ``--root DIR`` prefixes every system path read or written (resource config,
/etc, /proc/mounts, the FSx mount path, /opt/slurm, the log directory); ``--dry-run``
appends each command (mount, systemctl) to DIR/var/log/provision/commands.log instead of
running it, and treats it as successful. The controller's slurm.conf wait is never
skipped: in a dry run, create DIR/opt/slurm/etc/slurm.conf first or pass
``--slurm-conf-timeout 0``.

Compute and login nodes pass ``--conf-server <controller ip>`` to slurmd through
/etc/default/slurmd (``SLURMD_OPTIONS``), which a systemd drop-in
(/etc/systemd/system/slurmd.service.d/50-conf-server.conf) loads last, so it wins over any
other environment file; slurmd's unit must pass ``$SLURMD_OPTIONS`` as Slurm's own does.

Kept to the Python 3.8 standard library: nodes may ship an older python3.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

RESOURCE_CONFIG = "/opt/ml/config/resource_config.json"
SLURM_CONF = "/opt/slurm/etc/slurm.conf"
FSTAB = "/etc/fstab"
MOUNTS = "/proc/mounts"
SLURMD_DEFAULTS = "/etc/default/slurmd"
SLURMD_DROP_IN = "/etc/systemd/system/slurmd.service.d/50-conf-server.conf"
COMMAND_LOG = "/var/log/provision/commands.log"
MOUNT_OPTIONS = "noatime,flock,_netdev"
SHARED_DIRS = ("checkpoints", "logs")
REQUIRED_PARAMETERS = ("controller_group", "worker_groups", "fsx_dns_name", "fsx_mountname")


class ProvisionError(Exception):
    """A problem that stops provisioning; its message says what to fix."""


def log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    print(f"{stamp} provision: {message}", flush=True)


class System:
    """Paths under a root directory, and commands that are run or (dry run) recorded."""

    def __init__(self, root: str, dry_run: bool) -> None:
        self.root = Path(root)
        self.dry_run = dry_run

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def run(self, *command: str, check: bool = True) -> int:
        """Run ``command``; raise on failure when ``check``; return its exit code."""
        line = " ".join(shlex.quote(part) for part in command)
        log(f"run: {line}")
        if self.dry_run:
            record = self.path(COMMAND_LOG)
            record.parent.mkdir(parents=True, exist_ok=True)
            with record.open("a") as handle:
                handle.write(line + "\n")
            return 0
        code = subprocess.run(command, check=False).returncode
        if code != 0 and check:
            raise ProvisionError(f"command failed with exit code {code}: {line}")
        return code


class Node:
    """This node's place in the cluster."""

    def __init__(self, role: str, group: str, partition: str | None, controller_ip: str):
        self.role = role  # "controller", "login" or "compute"
        self.group = group
        self.partition = partition
        self.controller_ip = controller_ip


def load_json(path: Path, what: str) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ProvisionError(f"{what} not found at {path}") from None
    except ValueError as error:
        raise ProvisionError(f"{what} at {path} is not valid JSON: {error}") from None


def check_parameters(params: dict) -> None:
    missing = [key for key in REQUIRED_PARAMETERS if key not in params]
    if missing:
        raise ProvisionError("provisioning parameters lack " + ", ".join(missing))
    if params.get("workload_manager", "slurm") != "slurm":
        raise ProvisionError(
            f"workload_manager is {params['workload_manager']!r}; only 'slurm' is supported"
        )


def detect_ip() -> str:
    """The address this host uses for outbound traffic (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
    except OSError as error:
        raise ProvisionError(f"cannot detect this node's IP ({error}); pass --node-ip") from None


def instance_ips(group: dict) -> list:
    return [instance.get("CustomerIpAddress") for instance in group.get("Instances") or []]


def find_node(resource_config: dict, params: dict, node_ip: str) -> Node:
    """Match ``node_ip`` to an instance group and derive the node's role."""
    groups = resource_config.get("InstanceGroups") or []
    group = next((g for g in groups if node_ip in instance_ips(g)), None)
    if group is None:
        names = ", ".join(g.get("Name", "?") for g in groups) or "none"
        raise ProvisionError(
            f"node IP {node_ip} matches no CustomerIpAddress in the resource config "
            f"(instance groups: {names})"
        )
    name = group["Name"]
    controller: dict = next((g for g in groups if g.get("Name") == params["controller_group"]), {})
    controller_ips = instance_ips(controller)
    if not controller_ips:
        raise ProvisionError(
            f"controller group {params['controller_group']!r} has no instance in the "
            "resource config, so the controller address is unknown"
        )
    if name == params["controller_group"]:
        return Node("controller", name, None, controller_ips[0])
    if name == params.get("login_group"):
        return Node("login", name, None, controller_ips[0])
    partition = next(
        (
            worker.get("partition_name")
            for worker in params["worker_groups"]
            if worker.get("instance_group_name") == name
        ),
        None,
    )
    if partition is None:
        log(f"warning: group {name!r} is not listed in worker_groups; no partition known")
    return Node("compute", name, partition, controller_ips[0])


def write_fstab_entry(system: System, source: str, mount_path: str) -> None:
    """Make ``source`` the only fstab entry for ``mount_path`` (idempotent)."""
    fstab = system.path(FSTAB)
    entry = f"{source} {mount_path} lustre {MOUNT_OPTIONS},x-systemd.automount 0 0"
    lines = fstab.read_text().splitlines() if fstab.exists() else []
    kept = [
        line for line in lines if line.strip().startswith("#") or line.split()[1:2] != [mount_path]
    ]
    wanted = kept + [entry]
    if wanted != lines:
        fstab.parent.mkdir(parents=True, exist_ok=True)
        fstab.write_text("\n".join(wanted) + "\n")
        log(f"fstab entry for {mount_path}: {entry}")


def is_mounted(system: System, mount_path: str) -> bool:
    mounts = system.path(MOUNTS)
    if not mounts.exists():
        return False
    return any(line.split()[1:2] == [mount_path] for line in mounts.read_text().splitlines())


def retry(what: str, attempts: int, delay_s: float, action) -> None:
    """Call ``action`` until it returns True, at most ``attempts`` times."""
    for attempt in range(1, attempts + 1):
        if action():
            log(f"{what}: done (attempt {attempt}/{attempts})")
            return
        log(f"{what}: attempt {attempt}/{attempts} failed")
        if attempt < attempts:
            time.sleep(delay_s)
    raise ProvisionError(f"{what}: gave up after {attempts} attempts")


def mount_fsx(system: System, params: dict, attempts: int, delay_s: float) -> Path:
    """Mount FSx for Lustre, record it in fstab, and wait until it is writable."""
    mount_path = params.get("fsx_mount_path", "/fsx")
    source = f"{params['fsx_dns_name']}@tcp:/{params['fsx_mountname']}"
    target = system.path(mount_path)
    target.mkdir(parents=True, exist_ok=True)
    write_fstab_entry(system, source, mount_path)
    system.run("systemctl", "daemon-reload")
    if is_mounted(system, mount_path):
        log(f"{mount_path} is already mounted")
    else:

        def mount() -> bool:
            command = ("mount", "-t", "lustre", "-o", MOUNT_OPTIONS, source, str(target))
            return system.run(*command, check=False) == 0

        retry(f"mount {source} at {mount_path}", attempts, delay_s, mount)

    probe = target / f".provision-write-test-{socket.gethostname()}-{os.getpid()}"

    def writable() -> bool:
        try:
            probe.write_text("ok\n")
            probe.unlink()
            return True
        except OSError as error:
            log(f"{mount_path} not writable yet: {error}")
            return False

    retry(f"write check on {mount_path}", attempts, delay_s, writable)
    return target


def prepare_shared_dirs(fsx: Path) -> None:
    """Create world-writable, sticky shared directories (safe on every node)."""
    for name in SHARED_DIRS:
        directory = fsx / name
        directory.mkdir(exist_ok=True)
        os.chmod(directory, 0o1777)
        log(f"shared directory ready: {directory}")


def wait_for_slurm_conf(system: System, timeout_s: float, interval_s: float) -> None:
    """Wait until the HyperPod agent has written slurm.conf."""
    conf = system.path(SLURM_CONF)
    deadline = time.monotonic() + timeout_s
    while not conf.exists():
        if time.monotonic() >= deadline:
            raise ProvisionError(f"{conf} did not appear within {timeout_s:g} s")
        log(f"waiting for {conf}")
        time.sleep(interval_s)
    log(f"found {conf}")


def configure_slurmd(system: System, controller_ip: str) -> None:
    """Point slurmd at the controller (configless mode)."""
    defaults = system.path(SLURMD_DEFAULTS)
    defaults.parent.mkdir(parents=True, exist_ok=True)
    defaults.write_text(f'SLURMD_OPTIONS="--conf-server {controller_ip}"\n')
    drop_in = system.path(SLURMD_DROP_IN)
    drop_in.parent.mkdir(parents=True, exist_ok=True)
    drop_in.write_text(f"[Service]\nEnvironmentFile={SLURMD_DEFAULTS}\n")


def start_slurm(system: System, node: Node) -> None:
    """Start the role's Slurm daemon and keep the other one from starting."""
    if node.role == "controller":
        wanted, unwanted = "slurmctld", "slurmd"
    else:
        wanted, unwanted = "slurmd", "slurmctld"
        configure_slurmd(system, node.controller_ip)
    # The unused unit may not be installed at all: failing to disable it is harmless.
    system.run("systemctl", "disable", "--now", unwanted, check=False)
    system.run("systemctl", "daemon-reload")
    system.run("systemctl", "enable", wanted)
    # A login node is not a node of slurm.conf: its slurmd fetches the configuration from
    # the controller (so that sbatch and squeue work there) and may then stop, which must
    # not fail the node.
    started = system.run("systemctl", "start", wanted, check=node.role != "login") == 0
    if not started:
        log(
            f"{wanted} did not keep running on this login node; expected, as slurm.conf "
            "lists no login nodes"
        )


def parse_args(argv: list) -> argparse.Namespace:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--params",
        default=str(here / "provisioning_parameters.json"),
        help="provisioning parameters (default: next to this program; not under --root)",
    )
    parser.add_argument(
        "--resource-config",
        default=os.environ.get("SAGEMAKER_RESOURCE_CONFIG_PATH", RESOURCE_CONFIG),
        help="node resource config, under --root (default: $SAGEMAKER_RESOURCE_CONFIG_PATH "
        f"or {RESOURCE_CONFIG})",
    )
    parser.add_argument("--node-ip", help="this node's IP (default: detected from the host)")
    parser.add_argument("--root", default="/", help="prefix for every system path (tests)")
    parser.add_argument("--dry-run", action="store_true", help="record commands, run none")
    parser.add_argument("--mount-attempts", type=int, default=5)
    parser.add_argument("--retry-delay", type=float, default=10.0, help="seconds")
    parser.add_argument(
        "--slurm-conf-timeout", type=float, default=600.0, help="seconds (controller only)"
    )
    return parser.parse_args(argv)


def main(argv: list) -> int:
    args = parse_args(argv)
    system = System(args.root, args.dry_run)
    try:
        params = load_json(Path(args.params), "provisioning parameters")
        check_parameters(params)
        resource_config = load_json(system.path(args.resource_config), "resource config")
        node_ip = args.node_ip or detect_ip()
        node = find_node(resource_config, params, node_ip)
        log(
            f"node {node_ip}: role {node.role}, group {node.group}, "
            f"partition {node.partition or '-'}, controller {node.controller_ip}"
        )
        fsx = mount_fsx(system, params, args.mount_attempts, args.retry_delay)
        prepare_shared_dirs(fsx)
        if node.role == "controller":
            wait_for_slurm_conf(system, args.slurm_conf_timeout, min(args.retry_delay, 5.0))
        start_slurm(system, node)
    except ProvisionError as error:
        log(f"ERROR: {error}")
        return 1
    log("provisioning finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
