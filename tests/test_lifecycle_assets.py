"""The node lifecycle assets in lifecycle Slurm mode, exercised in dry-run mode under a
temporary root (shared users: test_lifecycle_users.py; managed mode:
test_lifecycle_managed.py)."""

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

from tests.lifecycle_support import (
    ASSETS,
    CONTROLLER_IP,
    DATA,
    LOGIN_IP,
    MOUNT,
    PARAMS,
    PROVISION,
    SLURM_CONF,
    SLURMD_EXEC,
    WORKER_IPS,
    Clock,
    asset_module,
    commands,
    make_root,
    provision,
)


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
    assert not any(line.startswith(("mount ", "modprobe ", "lctl ")) for line in commands(root))


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


def test_controller_waits_for_its_own_address_not_any_controller_line(root: Path) -> None:
    # slurm.conf still naming another controller (say, a stale one) must not start slurmctld.
    (root / "opt/slurm/etc/slurm.conf").write_text("SlurmctldHost=ip-10-9-9-9(10.9.9.9)\n")
    result = provision(root, CONTROLLER_IP, "--slurm-conf-timeout", "0")
    assert result.returncode != 0
    assert "does not name the controller 10.1.0.10 yet" in result.stdout
    assert not any("slurmctld" in line for line in commands(root))


@pytest.mark.parametrize(
    ("text", "controller"),
    [
        ("SlurmctldHost=ip-10-1-0-10(10.1.0.10)\n", "ip-10-1-0-10(10.1.0.10)"),
        ("ClusterName=x\n  controlmachine = ip-10-1-0-10\n", "ip-10-1-0-10"),
        ("SlurmctldHost=ip-10-1-0-10.ec2.internal\n", "ip-10-1-0-10.ec2.internal"),
        ("SlurmctldHost=head-1(10.1.0.10)\n", "head-1(10.1.0.10)"),
        # A backup controller line first: the line naming this address counts.
        ("SlurmctldHost=ip-10-1-0-11\nSlurmctldHost=ip-10-1-0-10\n", "ip-10-1-0-10"),
        ("SlurmctldHost=head-1\n", None),
        ("SlurmctldHost=ip-10-1-0-100(10.1.0.100)\n", None),
        ("NodeName=ctl NodeAddr=10.1.0.10\n", None),
        ("# SlurmctldHost=ip-10-1-0-10\nClusterName=x\n", None),
    ],
)
def test_slurm_conf_controller(text: str, controller: str | None) -> None:
    slurm = asset_module("node_slurm")
    assert slurm.slurm_conf_controller(text, ["10.1.0.10"]) == controller


def _system(root: Path, clock: Clock):
    return asset_module("node_system").System(
        str(root), dry_run=True, sleep=clock.sleep, clock=clock.clock
    )


def test_slurm_conf_wait_retries_with_backoff_until_the_controller_is_named(tmp_path) -> None:
    make_root(tmp_path)
    conf = tmp_path / "opt/slurm/etc/slurm.conf"
    conf.write_text("ClusterName=test\n")
    clock = Clock(on_sleep=lambda n: n == 3 and conf.write_text(SLURM_CONF))
    config = tmp_path / "opt/ml/config/resource_config.json"
    slurm = asset_module("node_slurm")
    found = slurm.wait_for_slurm_conf(_system(tmp_path, clock), config, "controller", 600, 5)
    assert found == f"ip-10-1-0-10({CONTROLLER_IP})"
    assert clock.pauses == [5, 10, 20]


def test_slurm_conf_wait_reads_the_resource_config_again(tmp_path, capsys) -> None:
    # The resource config lists no controller instance yet, then does: the wait must see it.
    make_root(tmp_path, config="resource_config_no_controller.json")
    config = tmp_path / "opt/ml/config/resource_config.json"
    complete = (DATA / "resource_config_with_login.json").read_text()
    clock = Clock(on_sleep=lambda n: n == 2 and config.write_text(complete))
    slurm = asset_module("node_slurm")
    found = slurm.wait_for_slurm_conf(_system(tmp_path, clock), config, "controller", 600, 1)
    assert found == f"ip-10-1-0-10({CONTROLLER_IP})"
    assert "lists no instance of 'controller' yet" in capsys.readouterr().out
    assert clock.pauses == [1, 2]


def test_wait_until_is_bounded_and_logged(capsys) -> None:
    node_system = asset_module("node_system")
    clock = Clock()
    system = node_system.System("/", dry_run=True, sleep=clock.sleep, clock=clock.clock)
    with pytest.raises(node_system.ProvisionError, match="still not ready after 1 attempts"):
        system.wait_until("thing", lambda: None, 0, 5)
    assert clock.pauses == []
    with pytest.raises(
        node_system.ProvisionError, match=r"thing: still not ready after 5 attempts in 45 s"
    ):
        system.wait_until("thing", lambda: None, 45, 4)
    assert clock.pauses == [4, 8, 16, 17]  # doubling, the last one cut to the limit
    assert "thing: not ready (attempt 1" in capsys.readouterr().out


class _Answers(asset_module("node_system").System):
    """A dry-run System whose local address comes from a list."""

    def __init__(self, root: Path, answers: list, clock: Clock) -> None:
        super().__init__(str(root), dry_run=True, sleep=clock.sleep, clock=clock.clock)
        self.answers = iter(answers)

    def local_address(self):
        return next(self.answers)


def test_node_address_is_awaited_until_the_resource_config_lists_it(tmp_path, capsys) -> None:
    make_root(tmp_path)
    config = tmp_path / "opt/ml/config/resource_config.json"
    system = _Answers(tmp_path, [None, "172.17.0.1", WORKER_IPS[0]], Clock())
    address, listed = asset_module("node_cluster").wait_for_node_ip(system, config, 300, 1)
    assert address == WORKER_IPS[0]
    assert listed == json.loads(config.read_text())
    out = capsys.readouterr().out
    assert "address 172.17.0.1 is not in the resource config" in out
    assert "this node's address: ready (attempt 3" in out


def test_node_address_wait_reads_the_resource_config_again(tmp_path) -> None:
    # The first read lacks this node (HyperPod still writing it); a later one lists it.
    make_root(tmp_path, config="resource_config_no_controller.json")
    config = tmp_path / "opt/ml/config/resource_config.json"
    complete = (DATA / "resource_config_with_login.json").read_text()
    clock = Clock(on_sleep=lambda n: n == 2 and config.write_text(complete))
    system = _Answers(tmp_path, [LOGIN_IP] * 5, clock)
    address, listed = asset_module("node_cluster").wait_for_node_ip(system, config, 300, 1)
    assert address == LOGIN_IP
    assert [g["Name"] for g in listed["InstanceGroups"]] == [
        "controller",
        "login",
        "workers",
        "spare",
    ]
    assert clock.pauses == [1, 2]


def test_node_address_wait_survives_a_resource_config_being_written(tmp_path, capsys) -> None:
    make_root(tmp_path)
    config = tmp_path / "opt/ml/config/resource_config.json"
    complete = config.read_text()
    config.write_text(complete[:40])  # cut short, as while HyperPod writes it
    clock = Clock(on_sleep=lambda n: config.write_text(complete))
    system = _Answers(tmp_path, [WORKER_IPS[1]] * 3, clock)
    address, _ = asset_module("node_cluster").wait_for_node_ip(system, config, 300, 1)
    assert address == WORKER_IPS[1]
    assert "is not valid JSON" in capsys.readouterr().out


def test_fsx_dns_name_is_awaited_before_mounting(root: Path) -> None:
    result = provision(root, WORKER_IPS[0])
    lines = commands(root)
    resolve = f"resolve {PARAMS['fsx_dns_name']}"
    assert lines.index(resolve) < lines.index(MOUNT.format(root=root))
    assert result.returncode == 0


def test_mount_is_retried_with_backoff(tmp_path) -> None:
    node_system = asset_module("node_system")
    clock = Clock()
    system = node_system.System(str(tmp_path), dry_run=True, sleep=clock.sleep)
    outcomes = iter([False, False, True])
    system.retry("mount", 5, 10, lambda: next(outcomes))
    assert clock.pauses == [10, 20]
    with pytest.raises(node_system.ProvisionError, match="mount: gave up after 3 attempts"):
        system.retry("mount", 3, 40, lambda: False)
    assert clock.pauses[2:] == [40, 60]


def test_unresolvable_fsx_name_fails_after_the_bound(tmp_path) -> None:
    lustre = asset_module("node_lustre")

    class NoDns(asset_module("node_system").System):
        def resolves(self, name):
            return False

    make_root(tmp_path)
    system = NoDns(str(tmp_path), dry_run=True)
    with pytest.raises(lustre.ProvisionError, match="DNS name fs-0123.* still not ready"):
        lustre.mount_lustre(system, PARAMS, 1, 0, 0)
    assert not (tmp_path / "var/log/provision/commands.log").exists()


def test_lnet_is_brought_up_before_the_mount(root: Path) -> None:
    assert provision(root, WORKER_IPS[0]).returncode == 0
    lines = commands(root)
    mount = lines.index(MOUNT.format(root=root))
    assert lines.index("modprobe lnet") < lines.index("lctl network up") < mount
    assert lines.index(f"resolve {PARAMS['fsx_dns_name']}") < lines.index("modprobe lnet")


class _Failing(asset_module("node_system").System):
    """A System that records every command and fails those starting with ``failing`` for
    their first ``times`` runs."""

    def __init__(self, root: Path, failing: tuple, times: int, clock: Clock) -> None:
        super().__init__(str(root), dry_run=False, sleep=clock.sleep, clock=clock.clock)
        self.failing, self.times, self.ran = failing, times, []

    def run(self, *command, check=True):
        self.ran.append(" ".join(command))
        if command[: len(self.failing)] == self.failing and self.times > 0:
            self.times -= 1
            return 1
        return 0

    def resolves(self, name):
        return True


def test_lnet_that_does_not_come_up_stops_before_mounting(tmp_path) -> None:
    make_root(tmp_path)
    lustre = asset_module("node_lustre")
    clock = Clock()
    system = _Failing(tmp_path, ("lctl", "network", "up"), 99, clock)
    with pytest.raises(lustre.ProvisionError, match="LNet up: gave up after 3 attempts"):
        lustre.mount_lustre(system, PARAMS, 3, 5, 0)
    assert system.ran.count("modprobe lnet") == 3
    assert not any(line.startswith("mount ") for line in system.ran)
    assert clock.pauses == [5, 10]


def test_lustre_client_package_is_held(root: Path) -> None:
    assert provision(root, WORKER_IPS[0]).returncode == 0
    lines = commands(root)
    assert "dpkg-query -W lustre-client-modules-aws" in lines
    assert "apt-mark hold lustre-client-modules-aws" in lines


def test_package_hold_waits_for_the_dpkg_lock(tmp_path) -> None:
    lustre = asset_module("node_lustre")
    clock = Clock()
    system = _Failing(tmp_path, ("apt-mark", "hold"), 2, clock)
    lustre.hold_lustre_client(system, 6, 3)
    assert system.ran.count("apt-mark hold lustre-client-modules-aws") == 3
    assert clock.pauses == [3, 6]


def test_package_not_installed_is_not_held(tmp_path, capsys) -> None:
    lustre = asset_module("node_lustre")
    system = _Failing(tmp_path, ("dpkg-query",), 1, Clock())
    lustre.hold_lustre_client(system, 6, 3)
    assert system.ran == ["dpkg-query -W lustre-client-modules-aws"]
    assert "lustre-client-modules-aws is not installed: nothing to hold" in capsys.readouterr().out


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


@pytest.mark.parametrize("script", sorted(p.name for p in ASSETS.glob("*.py")))
def test_assets_are_python38_syntax(script: str) -> None:
    ast.parse((ASSETS / script).read_text(), feature_version=(3, 8))


def test_assets_download_nothing() -> None:
    downloads = re.compile(r"https?://|\bcurl\b|\bwget\b|pip3? install|git clone|urllib")
    for asset in ASSETS.iterdir():
        if asset.is_file():
            assert not downloads.search(asset.read_text()), asset.name


@pytest.mark.parametrize(("role", "tolerated"), [("login", True), ("compute", False)])
def test_slurmd_that_stops_fails_compute_but_not_login_nodes(tmp_path, role, tolerated):
    slurm = asset_module("node_slurm")

    class StartFails(asset_module("node_system").System):
        def run(self, *command, check=True):
            if command[:3] == ("systemctl", "enable", "--now"):
                if check:
                    raise slurm.ProvisionError("start failed")
                return 3
            return 0

    node = slurm.Node(role, group=role, partition=None, controller_ip="10.1.0.10")
    make_root(tmp_path)
    system = StartFails(str(tmp_path), dry_run=False)
    if tolerated:
        slurm.start_slurm(system, node)
    else:
        with pytest.raises(slurm.ProvisionError):
            slurm.start_slurm(system, node)


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
    result = asset_module("node_slurm").with_conf_server(exec_start, "10.1.0.10")
    assert result == f"ExecStart=/opt/slurm/sbin/slurmd {expected}"


def test_vendor_unit_is_copied_to_etc_with_the_option(tmp_path) -> None:
    slurm = asset_module("node_slurm")
    vendor = tmp_path / "usr/lib/systemd/system/slurmd.service"
    vendor.parent.mkdir(parents=True)
    shutil.copy(DATA / "slurmd.service", vendor)
    system = asset_module("node_system").System(str(tmp_path), dry_run=True)
    slurm.write_slurmd_unit(system, "10.1.0.10")
    unit = (tmp_path / "etc/systemd/system/slurmd.service").read_text()
    assert "ExecStart=/opt/slurm/sbin/slurmd --systemd --conf-server 10.1.0.10\n" in unit
    assert vendor.read_text() == (DATA / "slurmd.service").read_text()


def test_missing_slurmd_unit_fails_with_clear_error(root: Path) -> None:
    (root / "etc/systemd/system/slurmd.service").unlink()
    result = provision(root, WORKER_IPS[0])
    assert result.returncode != 0
    assert "no slurmd.service unit at" in result.stdout
