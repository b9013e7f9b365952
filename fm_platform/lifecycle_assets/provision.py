#!/usr/bin/env python3
"""Provision one SageMaker HyperPod node for classic Slurm mode.

Run by on_create.sh as root. Steps: wait (bounded, with backoff) until this node has an
address listed in resource_config.json, which gives its role with
provisioning_parameters.json; wait until the FSx DNS name resolves and mount FSx for Lustre
(fstab entry, retries with backoff, write check); prepare the shared directories on it;
then start the role's Slurm daemon with systemd. The controller first waits until the
slurm.conf the HyperPod agent writes names the controller (``SlurmctldHost`` or
``ControlMachine``); login and compute nodes run configless: their slurmd unit gets
``--conf-server <controller ip>`` written into its ``ExecStart`` (where Slurm's unit says
``$SLURMD_OPTIONS``), systemd reloads, and slurmd is enabled and started. Nothing is
downloaded. Every wait is logged and bounded: the host agent restarts systemd-resolved
while lifecycle scripts run, so the network and DNS may be missing for a while.

Test mode: ``--root DIR`` prefixes every system path read or written (resource config,
/etc, /proc/mounts, the FSx mount path, /opt/slurm, the log directory); ``--dry-run``
appends each command (mount, systemctl) and DNS lookup to DIR/var/log/provision/commands.log
instead of running it, and treats it as successful. The controller's slurm.conf wait is
never skipped: in a dry run, write DIR/opt/slurm/etc/slurm.conf first or pass
``--slurm-conf-timeout 0``.

Kept to the Python 3.8 standard library: nodes may ship an older python3.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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
# The unit the HyperPod image installs, and where Slurm's packages put theirs.
SLURMD_UNIT = "/etc/systemd/system/slurmd.service"
VENDOR_SLURMD_UNITS = (
    "/usr/lib/systemd/system/slurmd.service",
    "/lib/systemd/system/slurmd.service",
)
# slurm.conf keys naming the controller (ControlMachine before Slurm 18.08); keys are
# case-insensitive.
CONTROLLER_KEY = re.compile(r"^\s*(SlurmctldHost|ControlMachine)\s*=\s*(\S+)", re.I | re.M)
MAX_BACKOFF_S = 60.0
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
            self.record(line)
            return 0
        code = subprocess.run(command, check=False).returncode
        if code != 0 and check:
            raise ProvisionError(f"command failed with exit code {code}: {line}")
        return code

    def record(self, line: str) -> None:
        """Append ``line`` to the dry run's command log."""
        record = self.path(COMMAND_LOG)
        record.parent.mkdir(parents=True, exist_ok=True)
        with record.open("a") as handle:
            handle.write(line + "\n")

    def resolves(self, name: str) -> bool:
        """True when ``name`` resolves in DNS (a dry run records the lookup and assumes so)."""
        if self.dry_run:
            self.record(f"resolve {name}")
            return True
        try:
            socket.getaddrinfo(name, None)
        except OSError as error:
            log(f"{name} does not resolve yet: {error}")
            return False
        return True


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


def probe_ip() -> str | None:
    """The address this host uses for outbound traffic (no packet is sent), or None while
    the network is not up."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
    except OSError as error:
        log(f"no route yet to find this node's address: {error}")
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def wait_until(
    what: str,
    attempt,
    timeout_s: float,
    first_delay_s: float,
    sleep=time.sleep,
    clock=time.monotonic,
):
    """Call ``attempt`` until it returns something other than None and return that. Between
    attempts sleep ``first_delay_s``, doubling up to MAX_BACKOFF_S; give up once
    ``timeout_s`` have passed (0: try once). Every attempt is logged."""
    start = clock()
    delay = first_delay_s
    tries = 0
    while True:
        tries += 1
        result = attempt()
        elapsed = clock() - start
        if result is not None:
            log(f"{what}: ready (attempt {tries}, {elapsed:.0f} s)")
            return result
        if elapsed >= timeout_s:
            raise ProvisionError(
                f"{what}: still not ready after {tries} attempts in {elapsed:.0f} s "
                f"(limit {timeout_s:g} s)"
            )
        pause = min(delay, max(timeout_s - elapsed, 0.0))
        log(f"{what}: not ready (attempt {tries}, {elapsed:.0f} s); next try in {pause:g} s")
        sleep(pause)
        delay = min(delay * 2, MAX_BACKOFF_S)


def instance_ips(group: dict) -> list:
    return [instance.get("CustomerIpAddress") for instance in group.get("Instances") or []]


def wait_for_node_ip(resource_config: dict, timeout_s: float, delay_s: float) -> str:
    """This node's address, once the network is up and the address is one the resource
    config lists (AWS's reference lifecycle scripts retry this lookup too)."""
    listed = {
        ip for group in resource_config.get("InstanceGroups") or [] for ip in instance_ips(group)
    }

    def attempt() -> str | None:
        address = probe_ip()
        if address is not None and address not in listed:
            log(f"address {address} is not in the resource config (yet)")
            return None
        return address

    return wait_until("this node's address", attempt, timeout_s, delay_s)


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


def retry(what: str, attempts: int, delay_s: float, action, sleep=time.sleep) -> None:
    """Call ``action`` until it returns True, at most ``attempts`` times, sleeping
    ``delay_s`` after the first failure and doubling that up to MAX_BACKOFF_S."""
    delay = delay_s
    for attempt in range(1, attempts + 1):
        if action():
            log(f"{what}: done (attempt {attempt}/{attempts})")
            return
        log(f"{what}: attempt {attempt}/{attempts} failed")
        if attempt < attempts:
            log(f"{what}: next try in {delay:g} s")
            sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)
    raise ProvisionError(f"{what}: gave up after {attempts} attempts")


def mount_fsx(
    system: System, params: dict, attempts: int, delay_s: float, dns_timeout_s: float
) -> Path:
    """Wait until the file system's DNS name resolves, mount FSx for Lustre, record it in
    fstab, and wait until it is writable."""
    mount_path = params.get("fsx_mount_path", "/fsx")
    dns_name = params["fsx_dns_name"]
    wait_until(
        f"DNS name {dns_name}",
        lambda: True if system.resolves(dns_name) else None,
        dns_timeout_s,
        delay_s,
    )
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


def slurm_conf_controller(text: str, controller_ip: str) -> str | None:
    """The controller slurm.conf names (``SlurmctldHost`` / ``ControlMachine``, or the
    controller's address anywhere, as AWS's reference checks), else None."""
    match = CONTROLLER_KEY.search(text)
    if match:
        return match.group(2)
    if re.search(r"(?<![0-9.])" + re.escape(controller_ip) + r"(?![0-9.])", text):
        return controller_ip
    return None


def wait_for_slurm_conf(
    system: System, controller_ip: str, timeout_s: float, delay_s: float
) -> str:
    """Wait until the HyperPod agent's slurm.conf names the controller; return its name."""
    conf = system.path(SLURM_CONF)

    def attempt() -> str | None:
        if not conf.exists():
            log(f"{conf} not written yet")
            return None
        return slurm_conf_controller(conf.read_text(), controller_ip)

    controller = wait_until(
        f"{conf} naming the controller (SlurmctldHost)", attempt, timeout_s, delay_s
    )
    log(f"slurm.conf names the controller {controller}")
    return controller


def with_conf_server(exec_start: str, controller_ip: str) -> str:
    """``exec_start`` with ``--conf-server <controller_ip>``: in place of
    ``$SLURMD_OPTIONS`` (as Slurm's own unit has it), replacing an earlier
    ``--conf-server``, or appended."""
    option = f"--conf-server {controller_ip}"
    variable = re.compile(r"\$\{?SLURMD_OPTIONS\}?")
    if variable.search(exec_start):
        return variable.sub(lambda _: option, exec_start)
    earlier = re.compile(r"--conf-server(=|\s+)\S+")
    if earlier.search(exec_start):
        return earlier.sub(lambda _: option, exec_start)
    return f"{exec_start} {option}"


def write_slurmd_unit(system: System, controller_ip: str) -> str:
    """Write slurmd's unit to /etc/systemd/system with ``--conf-server`` in its ExecStart
    (configless: slurmd fetches slurm.conf from the controller), as AWS's reference scripts
    do, instead of relying on the unit reading an environment file. Returns the unit."""
    candidates = [system.path(unit) for unit in (SLURMD_UNIT,) + VENDOR_SLURMD_UNITS]
    source = next((unit for unit in candidates if unit.is_file()), None)
    if source is None:
        raise ProvisionError(
            "no slurmd.service unit at "
            + ", ".join(str(c) for c in candidates)
            + ": this image lacks the Slurm node daemon"
        )
    lines = source.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"\s*ExecStart=\S", line)]
    if not starts:
        raise ProvisionError(f"{source} has no ExecStart line to add --conf-server to")
    for index in starts:
        lines[index] = with_conf_server(lines[index], controller_ip)
        log(f"slurmd unit: {lines[index].strip()}")
    unit = "\n".join(lines) + "\n"
    target = system.path(SLURMD_UNIT)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(unit)
    return unit


def start_slurm(system: System, node: Node) -> None:
    """Start the role's Slurm daemon and keep the other one from starting."""
    if node.role == "controller":
        wanted, unwanted = "slurmctld", "slurmd"
    else:
        wanted, unwanted = "slurmd", "slurmctld"
        write_slurmd_unit(system, node.controller_ip)
    # The unused unit may not be installed at all: failing to disable it is harmless.
    system.run("systemctl", "disable", "--now", unwanted, check=False)
    system.run("systemctl", "daemon-reload")
    # A login node is not a node of slurm.conf: its slurmd fetches the configuration from
    # the controller (so that sbatch and squeue work there) and may then stop, which must
    # not fail the node.
    started = system.run("systemctl", "enable", "--now", wanted, check=node.role != "login") == 0
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
    parser.add_argument(
        "--node-ip", help="this node's IP (default: detected from the host, with retries)"
    )
    parser.add_argument("--root", default="/", help="prefix for every system path (tests)")
    parser.add_argument("--dry-run", action="store_true", help="record commands, run none")
    parser.add_argument("--mount-attempts", type=int, default=6)
    parser.add_argument(
        "--retry-delay",
        type=float,
        default=5.0,
        help="seconds before the first retry of any wait; doubles up to 60",
    )
    parser.add_argument(
        "--network-timeout",
        type=float,
        default=300.0,
        help="seconds to wait for this node's address and for the FSx DNS name each",
    )
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
        node_ip = args.node_ip or wait_for_node_ip(
            resource_config, args.network_timeout, args.retry_delay
        )
        node = find_node(resource_config, params, node_ip)
        log(
            f"node {node_ip}: role {node.role}, group {node.group}, "
            f"partition {node.partition or '-'}, controller {node.controller_ip}"
        )
        fsx = mount_fsx(system, params, args.mount_attempts, args.retry_delay, args.network_timeout)
        prepare_shared_dirs(fsx)
        if node.role == "controller":
            wait_for_slurm_conf(
                system, node.controller_ip, args.slurm_conf_timeout, min(args.retry_delay, 5.0)
            )
        start_slurm(system, node)
    except ProvisionError as error:
        log(f"ERROR: {error}")
        return 1
    log("provisioning finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
