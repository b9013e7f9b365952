"""Helpers for the lifecycle-asset tests: a node laid out under a temporary root, provision.py
run in dry-run mode against it, and the asset modules imported in-process."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ASSETS = Path(__file__).resolve().parent.parent / "fm_platform" / "lifecycle_assets"
DATA = Path(__file__).resolve().parent / "data"
PROVISION = ASSETS / "provision.py"
CONTROLLER_IP, LOGIN_IP, WORKER_IPS = "10.1.0.10", "10.1.0.20", ("10.1.0.31", "10.1.0.32")
PARAMS = {
    "version": "1.0.0",
    "workload_manager": "slurm",
    "controller_group": "controller",
    "login_group": "login",
    "worker_groups": [{"instance_group_name": "workers", "partition_name": "dev"}],
    "fsx_dns_name": "fs-0123.fsx.us-east-1.amazonaws.com",
    "fsx_mountname": "abcdefgh",
    "fsx_mount_path": "/fsx",
}
NODE_SETUP = {"version": 1, "mode": "managed", "fsx_mount_path": "/fsx"}
SLURM_CONF = f"ClusterName=test\nSlurmctldHost=ip-10-1-0-10({CONTROLLER_IP})\n"
# Slurm's own unit (etc/slurmd.service.in), as the image installs it.
SLURMD_EXEC = "ExecStart=/opt/slurm/sbin/slurmd --systemd $SLURMD_OPTIONS"
MOUNT = (
    "mount -t lustre -o noatime,flock,_netdev "
    "fs-0123.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh {root}/fsx"
)
PASSWD = "root:x:0:0:root:/root:/bin/bash\nubuntu:x:1000:1000:Ubuntu:/home/ubuntu:/bin/bash\n"
GROUP = "root:x:0:\nubuntu:x:1000:\n"


def make_root(
    root: Path, config: str = "resource_config_with_login.json", params: dict | None = None
) -> Path:
    """Lay out what HyperPod gives a node under ``root``; return the parameters file."""
    config_dir = root / "opt/ml/config"
    config_dir.mkdir(parents=True)
    shutil.copy(DATA / config, config_dir / "resource_config.json")
    slurm_etc = root / "opt/slurm/etc"
    slurm_etc.mkdir(parents=True)
    (slurm_etc / "slurm.conf").write_text(SLURM_CONF)
    units = root / "etc/systemd/system"
    units.mkdir(parents=True)
    shutil.copy(DATA / "slurmd.service", units / "slurmd.service")
    (root / "etc/passwd").write_text(PASSWD)
    (root / "etc/group").write_text(GROUP)
    params_file = root / "provisioning_parameters.json"
    params_file.write_text(json.dumps(PARAMS if params is None else params))
    return params_file


def mounted(root: Path, *mount_paths: str) -> None:
    """Make /proc/mounts under ``root`` list ``mount_paths`` (and create them)."""
    (root / "proc").mkdir(exist_ok=True)
    lines = [f"10.1.9.9@tcp:/abcdefgh {path} lustre rw 0 0" for path in mount_paths]
    (root / "proc/mounts").write_text("\n".join(lines) + "\n")
    for path in mount_paths:
        (root / path.lstrip("/")).mkdir(parents=True, exist_ok=True)


def run_provision(root: Path, *args: str) -> subprocess.CompletedProcess:
    """provision.py --root ROOT --dry-run ARGS, without the resource-config variable."""
    env = {k: v for k, v in os.environ.items() if k != "SAGEMAKER_RESOURCE_CONFIG_PATH"}
    return subprocess.run(
        [sys.executable, str(PROVISION), "--root", str(root), "--dry-run", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def provision(root: Path, node_ip: str, *extra: str) -> subprocess.CompletedProcess:
    """A lifecycle-mode dry run as node ``node_ip``, without shared users unless ``extra``
    names a users file."""
    users = [] if "--users-file" in extra else ["--users-file", str(root / "no-users.txt")]
    return run_provision(
        root,
        "--node-ip",
        node_ip,
        "--params",
        str(root / "provisioning_parameters.json"),
        "--retry-delay",
        "0",
        *users,
        *extra,
    )


def commands(root: Path) -> list[str]:
    return (root / "var/log/provision/commands.log").read_text().splitlines()


def asset_module(name: str) -> ModuleType:
    """One of the lifecycle asset modules (node_system, node_lustre, ...) imported in-process
    from the assets folder, as provision.py imports them on a node."""
    if str(ASSETS) not in sys.path:
        sys.path.insert(0, str(ASSETS))
    return importlib.import_module(name)


class Clock:
    """A fake clock for System: sleeping advances it; ``on_sleep`` runs after each sleep."""

    def __init__(self, on_sleep=None) -> None:
        self.now = 0.0
        self.pauses: list[float] = []
        self.on_sleep = on_sleep

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(len(self.pauses))

    def clock(self) -> float:
        return self.now
