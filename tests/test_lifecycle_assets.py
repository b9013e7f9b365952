"""The node lifecycle assets, exercised in dry-run mode under a temporary root."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

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
SLURM_CONF = f"ClusterName=test\nSlurmctldHost=ip-10-1-0-10({CONTROLLER_IP})\n"
# Slurm's own unit (etc/slurmd.service.in), as the image installs it.
SLURMD_EXEC = "ExecStart=/opt/slurm/sbin/slurmd --systemd $SLURMD_OPTIONS"
MOUNT = (
    "mount -t lustre -o noatime,flock,_netdev "
    "fs-0123.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh {root}/fsx"
)


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
    params_file = root / "provisioning_parameters.json"
    params_file.write_text(json.dumps(PARAMS if params is None else params))
    return params_file


def provision(root: Path, node_ip: str, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SAGEMAKER_RESOURCE_CONFIG_PATH"}
    return subprocess.run(
        [sys.executable, str(PROVISION), "--root", str(root), "--dry-run", "--node-ip", node_ip]
        + ["--params", str(root / "provisioning_parameters.json"), "--retry-delay", "0"]
        + list(extra),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def commands(root: Path) -> list[str]:
    return (root / "var/log/provision/commands.log").read_text().splitlines()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_root(tmp_path)
    return tmp_path


def test_controller_starts_slurmctld_only(root: Path) -> None:
    result = provision(root, CONTROLLER_IP)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "role controller" in result.stdout
    lines = commands(root)
    assert MOUNT.format(root=root) in lines
    assert lines[-2:] == ["systemctl daemon-reload", "systemctl enable --now slurmctld"]
    assert "systemctl disable --now slurmd" in lines
    assert not any(re.search(r"systemctl (start|enable).* slurmd\b", line) for line in lines)
    # The controller leaves slurmd's unit as the image has it.
    unit = (root / "etc/systemd/system/slurmd.service").read_text()
    assert unit == (DATA / "slurmd.service").read_text()


@pytest.mark.parametrize(
    ("node_ip", "role"),
    [(LOGIN_IP, "login"), (WORKER_IPS[0], "compute"), (WORKER_IPS[1], "compute")],
)
def test_login_and_compute_start_slurmd_against_controller(
    root: Path, node_ip: str, role: str
) -> None:
    result = provision(root, node_ip)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"role {role}" in result.stdout
    lines = commands(root)
    assert MOUNT.format(root=root) in lines
    # The unit is rewritten first, then systemd reloads and slurmd is enabled and started.
    assert lines[-2:] == ["systemctl daemon-reload", "systemctl enable --now slurmd"]
    assert "systemctl disable --now slurmctld" in lines
    assert not any(re.search(r"systemctl (start|enable).* slurmctld\b", line) for line in lines)
    unit = (root / "etc/systemd/system/slurmd.service").read_text()
    expected = (
        (DATA / "slurmd.service")
        .read_text()
        .replace(
            SLURMD_EXEC,
            f"ExecStart=/opt/slurm/sbin/slurmd --systemd --conf-server {CONTROLLER_IP}",
        )
    )
    assert unit == expected
    assert "slurmd unit: ExecStart=/opt/slurm/sbin/slurmd --systemd --conf-server" in (
        result.stdout
    )


def test_compute_node_logs_its_partition(root: Path) -> None:
    result = provision(root, WORKER_IPS[0])
    assert "group workers, partition dev" in result.stdout


def test_fstab_entry_written_once_when_run_twice(root: Path) -> None:
    (root / "etc/fstab").write_text("UUID=abc / ext4 defaults 0 1\n")
    for _ in range(2):
        assert provision(root, WORKER_IPS[0]).returncode == 0
    fstab = (root / "etc/fstab").read_text().splitlines()
    assert fstab == [
        "UUID=abc / ext4 defaults 0 1",
        "fs-0123.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh /fsx lustre "
        "noatime,flock,_netdev,x-systemd.automount 0 0",
    ]


def test_already_mounted_file_system_is_not_mounted_again(root: Path) -> None:
    (root / "proc").mkdir()
    (root / "proc/mounts").write_text("10.1.9.9@tcp:/abcdefgh /fsx lustre rw 0 0\n")
    assert provision(root, WORKER_IPS[0]).returncode == 0
    assert not any(line.startswith("mount ") for line in commands(root))


def test_shared_directories_are_world_writable_and_sticky(root: Path) -> None:
    assert provision(root, CONTROLLER_IP).returncode == 0
    for name in ("checkpoints", "logs"):
        mode = (root / "fsx" / name).stat().st_mode
        assert stat.S_IMODE(mode) == 0o1777, name
    assert list((root / "fsx").glob(".provision-write-test-*")) == []


def test_custom_mount_path(tmp_path: Path) -> None:
    make_root(tmp_path, params={**PARAMS, "fsx_mount_path": "/shared"})
    assert provision(tmp_path, CONTROLLER_IP).returncode == 0
    assert (tmp_path / "shared/checkpoints").is_dir()
    assert any(line.endswith(f"{tmp_path}/shared") for line in commands(tmp_path))


def test_unknown_ip_fails_with_clear_error(root: Path) -> None:
    result = provision(root, "10.9.9.9")
    assert result.returncode != 0
    assert "node IP 10.9.9.9 matches no CustomerIpAddress" in result.stdout
    assert "controller, login, workers, spare" in result.stdout


def test_missing_resource_config_fails_with_clear_error(root: Path) -> None:
    (root / "opt/ml/config/resource_config.json").unlink()
    result = provision(root, CONTROLLER_IP)
    assert result.returncode != 0
    assert f"resource config not found at {root}/opt/ml/config/resource_config.json" in (
        result.stdout
    )


def test_resource_config_path_from_environment(root: Path) -> None:
    moved = root / "elsewhere/config.json"
    moved.parent.mkdir()
    (root / "opt/ml/config/resource_config.json").rename(moved)
    env = {**os.environ, "SAGEMAKER_RESOURCE_CONFIG_PATH": "/elsewhere/config.json"}
    result = subprocess.run(
        [sys.executable, str(PROVISION), "--root", str(root), "--dry-run"]
        + ["--node-ip", CONTROLLER_IP, "--params", str(root / "provisioning_parameters.json")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout


def test_controller_group_without_instances_fails(tmp_path: Path) -> None:
    make_root(tmp_path, config="resource_config_no_controller.json")
    result = provision(tmp_path, WORKER_IPS[0])
    assert result.returncode != 0
    assert "controller group 'controller' has no instance" in result.stdout


def test_missing_parameter_is_named(tmp_path: Path) -> None:
    params = {k: v for k, v in PARAMS.items() if k != "fsx_dns_name"}
    make_root(tmp_path, params=params)
    result = provision(tmp_path, CONTROLLER_IP)
    assert result.returncode != 0
    assert "provisioning parameters lack fsx_dns_name" in result.stdout


def test_missing_slurm_conf_times_out(root: Path) -> None:
    (root / "opt/slurm/etc/slurm.conf").unlink()
    result = provision(root, CONTROLLER_IP, "--slurm-conf-timeout", "0")
    assert result.returncode != 0
    assert "slurm.conf naming the controller (SlurmctldHost): still not ready after 1 " in (
        result.stdout
    )
    assert not any("slurmctld" in line for line in commands(root))


def test_controller_waits_until_slurm_conf_names_the_controller(root: Path) -> None:
    (root / "opt/slurm/etc/slurm.conf").write_text("ClusterName=test\n")
    result = provision(root, CONTROLLER_IP, "--slurm-conf-timeout", "0")
    assert result.returncode != 0
    assert "not written yet" not in result.stdout
    assert not any("slurmctld" in line for line in commands(root))


@pytest.mark.parametrize(
    ("text", "controller"),
    [
        ("SlurmctldHost=ip-10-1-0-10(10.1.0.10)\n", "ip-10-1-0-10(10.1.0.10)"),
        ("ClusterName=x\n  controlmachine = head-1\n", "head-1"),
        ("NodeName=ctl NodeAddr=10.1.0.10\n", "10.1.0.10"),
        ("NodeName=n NodeAddr=10.1.0.100\n", None),
        ("# SlurmctldHost=old\nClusterName=x\n", None),
    ],
)
def test_slurm_conf_controller(text: str, controller: str | None) -> None:
    assert _provision_module().slurm_conf_controller(text, "10.1.0.10") == controller


def test_slurm_conf_wait_retries_with_backoff_until_the_controller_is_named(tmp_path) -> None:
    provision = _provision_module()
    conf = tmp_path / "opt/slurm/etc/slurm.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("ClusterName=test\n")
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 3:
            conf.write_text(SLURM_CONF)

    original = provision.wait_until
    provision.wait_until = lambda *a, **k: original(*a, sleep=sleep, **k)
    system = provision.System(str(tmp_path), dry_run=True)
    assert provision.wait_for_slurm_conf(system, CONTROLLER_IP, 600, 5) == (
        f"ip-10-1-0-10({CONTROLLER_IP})"
    )
    assert pauses == [5, 10, 20]


def test_wait_until_is_bounded_and_logged(capsys) -> None:
    provision = _provision_module()
    pauses: list[float] = []
    with pytest.raises(provision.ProvisionError, match="still not ready after 1 attempts"):
        provision.wait_until("thing", lambda: None, 0, 5, sleep=pauses.append)
    assert pauses == []
    now = [0.0]

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds

    with pytest.raises(
        provision.ProvisionError, match=r"thing: still not ready after 5 attempts in 45 s"
    ):
        provision.wait_until("thing", lambda: None, 45, 4, sleep=sleep, clock=lambda: now[0])
    assert pauses == [4, 8, 16, 17]  # doubling, the last one cut to the limit
    assert "thing: not ready (attempt 1" in capsys.readouterr().out


def test_node_address_is_awaited_until_the_resource_config_lists_it(capsys) -> None:
    provision = _provision_module()
    config = json.loads((DATA / "resource_config_with_login.json").read_text())
    answers = iter([None, "172.17.0.1", WORKER_IPS[0]])
    provision.probe_ip = lambda: next(answers)
    original = provision.wait_until
    provision.wait_until = lambda *a, **k: original(*a, sleep=lambda _: None, **k)
    assert provision.wait_for_node_ip(config, 300, 1) == WORKER_IPS[0]
    out = capsys.readouterr().out
    assert "address 172.17.0.1 is not in the resource config" in out
    assert "this node's address: ready (attempt 3" in out


def test_fsx_dns_name_is_awaited_before_mounting(root: Path) -> None:
    result = provision(root, WORKER_IPS[0])
    lines = commands(root)
    resolve = f"resolve {PARAMS['fsx_dns_name']}"
    assert lines.index(resolve) < lines.index(MOUNT.format(root=root))
    assert result.returncode == 0


def test_mount_is_retried_with_backoff(tmp_path) -> None:
    provision = _provision_module()
    pauses: list[float] = []
    outcomes = iter([False, False, True])
    provision.retry("mount", 5, 10, lambda: next(outcomes), sleep=pauses.append)
    assert pauses == [10, 20]
    with pytest.raises(provision.ProvisionError, match="mount: gave up after 3 attempts"):
        provision.retry("mount", 3, 40, lambda: False, sleep=pauses.append)
    assert pauses[2:] == [40, 60]


def test_unresolvable_fsx_name_fails_after_the_bound(tmp_path) -> None:
    provision = _provision_module()

    class NoDns(provision.System):
        def resolves(self, name):
            return False

    make_root(tmp_path)
    system = NoDns(str(tmp_path), dry_run=True)
    with pytest.raises(provision.ProvisionError, match="DNS name fs-0123.* still not ready"):
        provision.mount_fsx(system, PARAMS, 1, 0, 0)
    assert not (tmp_path / "var/log/provision/commands.log").exists()


@pytest.mark.parametrize("node_ip", [LOGIN_IP, WORKER_IPS[0]])
def test_login_and_compute_need_no_local_slurm_conf(root: Path, node_ip: str) -> None:
    # Configless Slurm: slurmd fetches slurm.conf from the controller, so these nodes may
    # never get a local copy and must not wait for one.
    (root / "opt/slurm/etc/slurm.conf").unlink()
    result = provision(root, node_ip, "--slurm-conf-timeout", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "systemctl enable --now slurmd" in commands(root)


def test_on_create_runs_provision_and_logs(root: Path) -> None:
    log_dir = root / "var/log/provision"
    env = {**os.environ, "PROVISION_LOG_DIR": str(log_dir), "PROVISION_FAILURE_SLEEP": "0"}
    env.pop("SAGEMAKER_RESOURCE_CONFIG_PATH", None)
    lifecycle = root / "tmp/bucket/lifecycle-scripts"
    shutil.copytree(ASSETS, lifecycle, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "provisioning_parameters.json", lifecycle)
    script = str(lifecycle / "on_create.sh")
    args = ["--root", str(root), "--dry-run", "--retry-delay", "0"]
    ok = subprocess.run(
        ["bash", script, *args, "--node-ip", CONTROLLER_IP],
        capture_output=True,
        env=env,
        check=False,
    )
    assert ok.returncode == 0, ok.stdout
    assert "systemctl enable --now slurmctld" in commands(root)
    failed = subprocess.run(
        ["bash", script, *args, "--node-ip", "10.9.9.9"],
        capture_output=True,
        env=env,
        check=False,
    )
    assert failed.returncode != 0
    log = (log_dir / "provisioning.log").read_text()
    assert "on_create: finished" in log
    assert "on_create: ERROR: provision.py exited with code 1" in log


def test_on_create_passes_shellcheck() -> None:
    shellcheck = Path(sys.executable).parent / "shellcheck"
    result = subprocess.run(
        [str(shellcheck), "--severity=style", str(ASSETS / "on_create.sh")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout


def test_provision_is_python38_syntax() -> None:
    ast.parse(PROVISION.read_text(), feature_version=(3, 8))


def test_assets_download_nothing() -> None:
    downloads = re.compile(r"https?://|\bcurl\b|\bwget\b|pip3? install|git clone|urllib")
    for asset in ASSETS.iterdir():
        if asset.is_file():
            assert not downloads.search(asset.read_text()), asset.name


def _provision_module():
    """provision.py imported in-process, to drive single steps with a failing system."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("provision_under_test", PROVISION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("role", "tolerated"), [("login", True), ("compute", False)])
def test_slurmd_that_stops_fails_compute_but_not_login_nodes(tmp_path, role, tolerated):
    provision = _provision_module()

    class StartFails(provision.System):
        def run(self, *command, check=True):
            if command[:3] == ("systemctl", "enable", "--now"):
                if check:
                    raise provision.ProvisionError("start failed")
                return 3
            return 0

    node = provision.Node(role, group=role, partition=None, controller_ip="10.1.0.10")
    make_root(tmp_path)
    system = StartFails(str(tmp_path), dry_run=False)
    if tolerated:
        provision.start_slurm(system, node)
    else:
        with pytest.raises(provision.ProvisionError):
            provision.start_slurm(system, node)


@pytest.mark.parametrize(
    ("exec_start", "expected"),
    [
        (
            "ExecStart=/opt/slurm/sbin/slurmd -D -s ${SLURMD_OPTIONS}",
            "-D -s --conf-server 10.1.0.10",
        ),
        (
            "ExecStart=/opt/slurm/sbin/slurmd -D --conf-server 10.9.9.9",
            "-D --conf-server 10.1.0.10",
        ),
        ("ExecStart=/opt/slurm/sbin/slurmd -D", "-D --conf-server 10.1.0.10"),
    ],
)
def test_conf_server_goes_into_exec_start(exec_start: str, expected: str) -> None:
    result = _provision_module().with_conf_server(exec_start, "10.1.0.10")
    assert result == f"ExecStart=/opt/slurm/sbin/slurmd {expected}"


def test_vendor_unit_is_copied_to_etc_with_the_option(tmp_path) -> None:
    provision = _provision_module()
    vendor = tmp_path / "usr/lib/systemd/system/slurmd.service"
    vendor.parent.mkdir(parents=True)
    shutil.copy(DATA / "slurmd.service", vendor)
    system = provision.System(str(tmp_path), dry_run=True)
    provision.write_slurmd_unit(system, "10.1.0.10")
    unit = (tmp_path / "etc/systemd/system/slurmd.service").read_text()
    assert "ExecStart=/opt/slurm/sbin/slurmd --systemd --conf-server 10.1.0.10\n" in unit
    assert vendor.read_text() == (DATA / "slurmd.service").read_text()


def test_missing_slurmd_unit_fails_with_clear_error(root: Path) -> None:
    (root / "etc/systemd/system/slurmd.service").unlink()
    result = provision(root, WORKER_IPS[0])
    assert result.returncode != 0
    assert "no slurmd.service unit at" in result.stdout
