#!/usr/bin/env python3
"""Provision one SageMaker HyperPod node, in lifecycle or managed Slurm mode.

Run by on_create.sh as root, which picks the mode by the parameters file beside the scripts.

Lifecycle mode (``--params provisioning_parameters.json``, HyperPod's classic file:
``controller_group``, optional ``login_group``, ``worker_groups``, ``fsx_dns_name``,
``fsx_mountname``, optional ``fsx_mount_path`` (default /fsx)): wait (bounded, with backoff,
re-reading the resource config on every attempt) until this node has an address listed in
resource_config.json, which gives its role; hold the Lustre client package; wait until the
FSx DNS name resolves, bring LNet up and mount FSx for Lustre (fstab entry, retries, write
check); prepare the shared directories and the shared users; then start the role's Slurm
daemon with systemd. The controller first waits until the slurm.conf the HyperPod agent writes
names an address of the controller group from the resource config (re-read on every
attempt); login and compute nodes run configless: their slurmd unit gets
``--conf-server <controller ip>`` written into its ``ExecStart``.

Managed mode (``--node-setup fmp_node_setup.json``): HyperPod configures and starts Slurm
(``SlurmConfig`` on the instance groups) and, through ``InstanceStorageConfigs``, mounts the
file systems; a provisioning_parameters.json would be rejected together with SlurmConfig.
This mode does only what HyperPod does not: hold the Lustre client package, mount FSx for
Lustre only when the file names it (else wait, bounded, until HyperPod's mount at
``fsx_mount_path`` is writable), prepare the shared directories and the shared users. A
file system that does not come in time is logged as an ERROR and does not fail the node
(on the controller it would fail the cluster); run the script again once it is up. The
file (written by the construct) is a JSON object with exactly these keys:

- ``version`` (required): 1.
- ``mode`` (required): ``"managed"``.
- ``fsx_mount_path`` (required): absolute path of the FSx for Lustre file system on the node
  (the ``MountPath`` of the group's ``FsxLustreConfig``); shared directories go there.
- ``fsx_dns_name`` and ``fsx_mountname`` (optional, together): set them only where HyperPod
  does not mount the file system itself; the script then mounts it at ``fsx_mount_path``.
- ``home_mount_path`` (optional): absolute path where HyperPod mounts a home file system (an
  ``FsxOpenZfsConfig`` ``MountPath``); shared users' homes go to ``<home_mount_path>/<name>``
  instead of the default ``<fsx_mount_path>/home/<name>``.

Both modes: shared users are set up only when ``shared_users.txt`` lies beside the scripts
(format in node_users.py). Nothing is downloaded. Every wait is logged and bounded: the host
agent restarts systemd-resolved while lifecycle scripts run, so the network and DNS may be
missing for a while.

Test mode: ``--root DIR`` prefixes every system path read or written (resource config,
/etc, /proc/mounts, the mount paths, /opt/slurm, the log directory); ``--dry-run`` appends
each command (mount, systemctl, useradd, ...), ownership change and DNS lookup to
DIR/var/log/provision/commands.log instead of running it, and treats it as successful. The
controller's slurm.conf wait is never skipped: in a dry run, write DIR/opt/slurm/etc/slurm.conf
first or pass ``--slurm-conf-timeout 0``.

Kept to the Python 3.8 standard library: nodes may ship an older python3.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from node_cluster import RESOURCE_CONFIG, find_node, wait_for_node_ip
from node_lustre import hold_lustre_client, mount_lustre, wait_for_mount
from node_slurm import start_slurm, wait_for_slurm_conf
from node_system import ProvisionError, System, load_json, log
from node_users import USERS_FILE, setup_users

SHARED_DIRS = ("checkpoints", "logs")
REQUIRED_PARAMETERS = ("controller_group", "worker_groups", "fsx_dns_name", "fsx_mountname")
NODE_SETUP_FILE = "fmp_node_setup.json"
NODE_SETUP_VERSION = 1
NODE_SETUP_REQUIRED = ("version", "mode", "fsx_mount_path")
NODE_SETUP_OPTIONAL = ("fsx_dns_name", "fsx_mountname", "home_mount_path")


def check_parameters(params: dict) -> None:
    missing = [key for key in REQUIRED_PARAMETERS if key not in params]
    if missing:
        raise ProvisionError("provisioning parameters lack " + ", ".join(missing))
    if params.get("workload_manager", "slurm") != "slurm":
        raise ProvisionError(
            f"workload_manager is {params['workload_manager']!r}; only 'slurm' is supported"
        )


def _is_absolute_path(value) -> bool:
    return (
        isinstance(value, str)
        and value.startswith("/")
        and value != "/"
        and os.path.normpath(value) == value
    )


def check_node_setup(setup: dict) -> None:
    """Raise one ProvisionError naming every key of ``setup`` that breaks the contract."""
    problems = [f"{key} is missing" for key in NODE_SETUP_REQUIRED if key not in setup]
    unknown = sorted(set(setup) - set(NODE_SETUP_REQUIRED) - set(NODE_SETUP_OPTIONAL))
    problems += [f"{key} is not a known key" for key in unknown]
    if "version" in setup and setup["version"] != NODE_SETUP_VERSION:
        problems.append(f"version is {setup['version']!r}; this script reads version 1")
    if "mode" in setup and setup["mode"] != "managed":
        problems.append(f"mode is {setup['mode']!r}; only 'managed' goes in this file")
    for key in ("fsx_mount_path", "home_mount_path"):
        if key in setup and not _is_absolute_path(setup[key]):
            problems.append(f"{key} is {setup[key]!r}; must be an absolute, normalized path")
    if ("fsx_dns_name" in setup) != ("fsx_mountname" in setup):
        problems.append("fsx_dns_name and fsx_mountname go together")
    if problems:
        raise ProvisionError(f"{NODE_SETUP_FILE}: " + "; ".join(problems))


def prepare_shared_dirs(fsx: Path) -> None:
    """Create world-writable, sticky shared directories (safe on every node)."""
    for name in SHARED_DIRS:
        directory = fsx / name
        directory.mkdir(exist_ok=True)
        os.chmod(directory, 0o1777)
        log(f"shared directory ready: {directory}")


def provision_lifecycle(system: System, args: argparse.Namespace) -> None:
    params = load_json(Path(args.params), "provisioning parameters")
    check_parameters(params)
    config_path = system.path(args.resource_config)
    resource_config = load_json(config_path, "resource config")
    if args.node_ip:
        node_ip = args.node_ip
    else:
        node_ip, resource_config = wait_for_node_ip(
            system, config_path, args.network_timeout, args.retry_delay
        )
    node = find_node(resource_config, params, node_ip)
    log(
        f"node {node_ip}: role {node.role}, group {node.group}, "
        f"partition {node.partition or '-'}, controller {node.controller_ip}"
    )
    hold_lustre_client(system, args.mount_attempts, args.retry_delay)
    fsx = mount_lustre(system, params, args.mount_attempts, args.retry_delay, args.network_timeout)
    prepare_shared_dirs(fsx)
    home_root = f"{params.get('fsx_mount_path', '/fsx').rstrip('/')}/home"
    setup_users(system, Path(args.users_file), home_root, args.network_timeout, args.retry_delay)
    if node.role == "controller":
        wait_for_slurm_conf(
            system,
            config_path,
            params["controller_group"],
            args.slurm_conf_timeout,
            min(args.retry_delay, 5.0),
        )
    start_slurm(system, node)


def provision_managed(system: System, args: argparse.Namespace) -> None:
    setup = load_json(Path(args.node_setup), "node setup")
    check_node_setup(setup)
    log(f"managed Slurm mode: HyperPod configures Slurm; FSx at {setup['fsx_mount_path']}")
    hold_lustre_client(system, args.mount_attempts, args.retry_delay)
    # A lifecycle script that fails on the controller fails the whole cluster, and cannot
    # be retried (SageMaker HyperPod developer guide, Slurm cluster scaling); HyperPod
    # mounts the file systems itself here. So a file system that is only slow to appear
    # does not fail the node: the ERROR line reaches the lifecycle error alarm, and the
    # shared directories and users are set up by running this again.
    try:
        _set_up_shared_storage(system, args, setup)
    except ProvisionError as error:
        log(
            f"ERROR: {error}; the node is left running without the shared directories and "
            "users (a failed script on the controller would fail the cluster). Once the file "
            f"system is up, run again as root: python3 {Path(__file__).resolve()} "
            f"--node-setup {args.node_setup}"
        )


def _set_up_shared_storage(system: System, args: argparse.Namespace, setup: dict) -> None:
    """Mount or wait for the file systems, then the shared directories and users."""
    if "fsx_dns_name" in setup:
        fsx = mount_lustre(
            system, setup, args.mount_attempts, args.retry_delay, args.network_timeout
        )
    else:
        fsx = wait_for_mount(
            system,
            setup["fsx_mount_path"],
            args.network_timeout,
            args.mount_attempts,
            args.retry_delay,
        )
    prepare_shared_dirs(fsx)
    home_root = f"{setup['fsx_mount_path'].rstrip('/')}/home"
    if "home_mount_path" in setup:
        home_root = setup["home_mount_path"]
        wait_for_mount(
            system, home_root, args.network_timeout, args.mount_attempts, args.retry_delay
        )
    setup_users(system, Path(args.users_file), home_root, args.network_timeout, args.retry_delay)


def parse_args(argv: list) -> argparse.Namespace:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--params",
        default=str(here / "provisioning_parameters.json"),
        help="lifecycle mode: provisioning parameters (default: next to this program; "
        "not under --root)",
    )
    mode.add_argument(
        "--node-setup",
        help=f"managed mode: the {NODE_SETUP_FILE} to read (not under --root)",
    )
    parser.add_argument(
        "--users-file",
        default=str(here / USERS_FILE),
        help="shared users; none are set up when the file does not exist (default: "
        f"{USERS_FILE} next to this program; not under --root)",
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
    parser.add_argument(
        "--mount-attempts",
        type=int,
        default=6,
        help="tries of each mount step and of the package hold (default: %(default)s)",
    )
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
        help="seconds to wait for each of: this node's address, the FSx DNS name, a file "
        "system HyperPod mounts, another node's SSH key (default: %(default)s)",
    )
    parser.add_argument(
        "--slurm-conf-timeout",
        type=float,
        default=600.0,
        help="seconds (lifecycle mode, controller only; default: %(default)s)",
    )
    return parser.parse_args(argv)


def main(argv: list) -> int:
    args = parse_args(argv)
    system = System(args.root, args.dry_run)
    try:
        if args.node_setup:
            provision_managed(system, args)
        else:
            provision_lifecycle(system, args)
    except ProvisionError as error:
        log(f"ERROR: {error}")
        return 1
    log("provisioning finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
