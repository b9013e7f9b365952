"""The lifecycle assets in managed Slurm mode (HyperPod configures Slurm; the scripts read
fmp_node_setup.json, never provisioning_parameters.json), and on_create.sh's choice of mode."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.lifecycle_support import (
    ASSETS,
    DATA,
    MOUNT,
    NODE_SETUP,
    PARAMS,
    asset_module,
    commands,
    make_root,
    mounted,
    run_provision,
)

USERS = "alice,2001\n"


def managed_root(root: Path, setup: dict | None = None) -> Path:
    """A node of a managed-mode cluster: no provisioning_parameters.json, no slurm.conf and
    no resource config needed; returns the node setup file."""
    make_root(root)
    (root / "provisioning_parameters.json").unlink()
    (root / "opt/slurm/etc/slurm.conf").unlink()
    (root / "opt/ml/config/resource_config.json").unlink()
    node_setup = root / "fmp_node_setup.json"
    node_setup.write_text(json.dumps(NODE_SETUP if setup is None else setup))
    return node_setup


def provision_managed(root: Path, *extra: str) -> subprocess.CompletedProcess:
    users = [] if "--users-file" in extra else ["--users-file", str(root / "no-users.txt")]
    return run_provision(
        root,
        "--node-setup",
        str(root / "fmp_node_setup.json"),
        "--retry-delay",
        "0",
        "--network-timeout",
        "0",
        *users,
        *extra,
    )


def test_managed_mode_does_only_what_hyperpod_does_not(tmp_path: Path) -> None:
    managed_root(tmp_path)
    mounted(tmp_path, "/fsx")  # HyperPod mounted FSx (InstanceStorageConfigs)
    users = tmp_path / "shared_users.txt"
    users.write_text(USERS)
    result = provision_managed(tmp_path, "--users-file", str(users))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = commands(tmp_path)
    # Slurm and the mount are HyperPod's: no daemon, no unit, no mount.
    assert not any(line.startswith(("systemctl", "mount ", "modprobe", "lctl")) for line in lines)
    unit = (tmp_path / "etc/systemd/system/slurmd.service").read_text()
    assert unit == (DATA / "slurmd.service").read_text()
    # What it does: the package hold, the shared directories, the shared users.
    assert "apt-mark hold lustre-client-modules-aws" in lines
    for name in ("checkpoints", "logs"):
        assert stat.S_IMODE((tmp_path / "fsx" / name).stat().st_mode) == 0o1777
    assert any(line.startswith("useradd --uid 2001") for line in lines)
    assert (tmp_path / "fsx/home/alice").is_dir()


def test_managed_mode_waits_for_the_mount_hyperpod_makes(tmp_path: Path) -> None:
    managed_root(tmp_path)
    result = provision_managed(tmp_path)
    # A slow file system does not fail the node (on the controller it would fail the
    # cluster): the ERROR line reaches the alarm and names the command to run again.
    assert result.returncode == 0, result.stdout
    assert "nothing is mounted at /fsx yet" in result.stdout
    assert "ERROR: file system at /fsx: still not ready after 1 attempts" in result.stdout
    assert "run again as root: python3 " in result.stdout
    assert "--node-setup " in result.stdout
    assert not (tmp_path / "fsx/checkpoints").exists()


def test_managed_mode_mounts_fsx_itself_when_told(tmp_path: Path) -> None:
    setup = {**NODE_SETUP, "fsx_dns_name": PARAMS["fsx_dns_name"], "fsx_mountname": "abcdefgh"}
    managed_root(tmp_path, setup)
    result = provision_managed(tmp_path)
    assert result.returncode == 0, result.stdout
    lines = commands(tmp_path)
    assert lines.index("lctl network up") < lines.index(MOUNT.format(root=tmp_path))
    assert (tmp_path / "fsx/checkpoints").is_dir()


def test_managed_mode_puts_homes_on_the_home_file_system(tmp_path: Path) -> None:
    managed_root(tmp_path, {**NODE_SETUP, "home_mount_path": "/home"})
    mounted(tmp_path, "/fsx", "/home")  # an FSx for OpenZFS file system mounted at /home
    users = tmp_path / "shared_users.txt"
    users.write_text(USERS)
    result = provision_managed(tmp_path, "--users-file", str(users))
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "home/alice/.ssh").is_dir()
    assert "--home-dir /home/alice" in "\n".join(commands(tmp_path))


def test_managed_mode_waits_for_the_home_file_system(tmp_path: Path) -> None:
    managed_root(tmp_path, {**NODE_SETUP, "home_mount_path": "/home"})
    mounted(tmp_path, "/fsx")
    result = provision_managed(tmp_path)
    assert result.returncode == 0, result.stdout
    assert "ERROR: file system at /home: still not ready" in result.stdout


def test_node_setup_problems_are_reported_together(tmp_path: Path) -> None:
    bad = {
        "version": 2,
        "mode": "lifecycle",
        "fsx_mount_path": "fsx",
        "fsx_dns_name": "fs-1.fsx.us-east-1.amazonaws.com",
        "home_mount_path": "/home/../etc",
        "users": ["alice"],
    }
    managed_root(tmp_path, bad)
    result = provision_managed(tmp_path)
    assert result.returncode != 0
    message = next(line for line in result.stdout.splitlines() if "ERROR" in line)
    for part in (
        "fmp_node_setup.json: ",
        "users is not a known key",
        "version is 2; this script reads version 1",
        "mode is 'lifecycle'; only 'managed' goes in this file",
        "fsx_mount_path is 'fsx'; must be an absolute, normalized path",
        "home_mount_path is '/home/../etc'",
        "fsx_dns_name and fsx_mountname go together",
    ):
        assert part in message


def test_node_setup_lacking_required_keys(tmp_path: Path) -> None:
    managed_root(tmp_path, {"mode": "managed"})
    result = provision_managed(tmp_path)
    assert "version is missing; fsx_mount_path is missing" in result.stdout


def run_on_create(root: Path, files: dict[str, str]) -> subprocess.CompletedProcess:
    """on_create.sh from a copy of the assets with ``files`` added beside it."""
    lifecycle = root / "tmp/bucket/lifecycle-scripts"
    shutil.copytree(ASSETS, lifecycle, ignore=shutil.ignore_patterns("__pycache__"))
    for name, content in files.items():
        (lifecycle / name).write_text(content)
    env = {
        **os.environ,
        "PROVISION_LOG_DIR": str(root / "var/log/provision"),
        "PROVISION_FAILURE_SLEEP": "0",
    }
    env.pop("SAGEMAKER_RESOURCE_CONFIG_PATH", None)
    args = ["--root", str(root), "--dry-run", "--retry-delay", "0", "--network-timeout", "0"]
    return subprocess.run(
        ["bash", str(lifecycle / "on_create.sh"), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_on_create_runs_managed_mode_without_provisioning_parameters(tmp_path: Path) -> None:
    managed_root(tmp_path)
    mounted(tmp_path, "/fsx")
    result = run_on_create(tmp_path, {"fmp_node_setup.json": json.dumps(NODE_SETUP)})
    assert result.returncode == 0, result.stdout
    assert "managed Slurm mode" in result.stdout
    assert "on_create: finished" in result.stdout


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "neither "),
        (
            {
                "provisioning_parameters.json": json.dumps(PARAMS),
                "fmp_node_setup.json": json.dumps(NODE_SETUP),
            },
            "both ",
        ),
    ],
)
def test_on_create_needs_exactly_one_parameters_file(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    managed_root(tmp_path)
    result = run_on_create(tmp_path, files)
    assert result.returncode != 0
    assert f"on_create: ERROR: {message}" in result.stdout
    assert not (tmp_path / "var/log/provision/commands.log").exists()


def test_managed_mode_needs_no_resource_config(tmp_path: Path) -> None:
    managed_root(tmp_path)
    mounted(tmp_path, "/fsx")
    assert not (tmp_path / "opt/ml/config/resource_config.json").exists()
    assert provision_managed(tmp_path).returncode == 0


def test_contract_keys_are_the_documented_ones() -> None:
    provision_doc = (ASSETS / "provision.py").read_text()
    provision = asset_module("provision")
    for key in provision.NODE_SETUP_REQUIRED + provision.NODE_SETUP_OPTIONAL:
        assert f"``{key}``" in provision_doc, key
