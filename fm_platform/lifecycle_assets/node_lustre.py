"""FSx for Lustre on a node: hold the client package, bring LNet up, mount with an fstab entry,
and wait until a file system (mounted here or by HyperPod) is writable.

Follows AWS's reference lifecycle scripts (awsome-distributed-training, base-config:
``mount_fsx.sh`` loads ``lnet`` and runs ``lctl network up`` before mounting;
``hotfix/hold-lustre-client.sh`` holds ``lustre-client-modules-aws`` so that an upgrade does
not bring a kernel the Lustre client module is not built for).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from node_system import ProvisionError, System, log

FSTAB = "/etc/fstab"
MOUNTS = "/proc/mounts"
MOUNT_OPTIONS = "noatime,flock,_netdev"
# The package of the HyperPod image whose upgrade would bring a new kernel (AWS's reference
# hotfix/hold-lustre-client.sh holds it).
LUSTRE_CLIENT_PACKAGE = "lustre-client-modules-aws"


def hold_lustre_client(system: System, attempts: int, delay_s: float) -> None:
    """Keep unattended upgrades from replacing the Lustre client (``apt-mark hold``), retried
    while another dpkg run holds its lock. Nothing to do when the package is not installed."""
    if system.run("dpkg-query", "-W", LUSTRE_CLIENT_PACKAGE, check=False) != 0:
        log(f"{LUSTRE_CLIENT_PACKAGE} is not installed: nothing to hold")
        return
    system.retry(
        f"hold {LUSTRE_CLIENT_PACKAGE}",
        attempts,
        delay_s,
        lambda: system.run("apt-mark", "hold", LUSTRE_CLIENT_PACKAGE, check=False) == 0,
    )


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


def bring_up_lnet(system: System, attempts: int, delay_s: float) -> None:
    """Load the LNet module and bring the Lustre network up before mounting, so that a
    network problem shows here with its own message instead of as a failed mount."""

    def up() -> bool:
        return (
            system.run("modprobe", "lnet", check=False) == 0
            and system.run("lctl", "network", "up", check=False) == 0
        )

    system.retry("LNet up", attempts, delay_s, up)


def wait_writable(system: System, target: Path, attempts: int, delay_s: float) -> None:
    """Create and delete a file in ``target`` until that works ("mounted but not writable
    yet" is a known race)."""
    probe = target / f".provision-write-test-{socket.gethostname()}-{os.getpid()}"

    def writable() -> bool:
        try:
            probe.write_text("ok\n")
            probe.unlink()
            return True
        except OSError as error:
            log(f"{target} not writable yet: {error}")
            return False

    system.retry(f"write check on {target}", attempts, delay_s, writable)


def mount_lustre(
    system: System, params: dict, attempts: int, delay_s: float, dns_timeout_s: float
) -> Path:
    """Mount ``params``' FSx for Lustre (``fsx_dns_name``, ``fsx_mountname``,
    ``fsx_mount_path``, default /fsx): wait until the DNS name resolves, record the mount in
    fstab, bring LNet up, mount with retries, and wait until it is writable."""
    mount_path = params.get("fsx_mount_path", "/fsx")
    dns_name = params["fsx_dns_name"]
    system.wait_until(
        f"DNS name {dns_name}",
        lambda: True if system.resolves(dns_name) else None,
        dns_timeout_s,
        delay_s,
    )
    source = f"{dns_name}@tcp:/{params['fsx_mountname']}"
    target = system.path(mount_path)
    target.mkdir(parents=True, exist_ok=True)
    write_fstab_entry(system, source, mount_path)
    system.run("systemctl", "daemon-reload")
    if is_mounted(system, mount_path):
        log(f"{mount_path} is already mounted")
    else:
        bring_up_lnet(system, attempts, delay_s)

        def mount() -> bool:
            command = ("mount", "-t", "lustre", "-o", MOUNT_OPTIONS, source, str(target))
            return system.run(*command, check=False) == 0

        system.retry(f"mount {source} at {mount_path}", attempts, delay_s, mount)
    wait_writable(system, target, attempts, delay_s)
    return target


def wait_for_mount(
    system: System, mount_path: str, timeout_s: float, attempts: int, delay_s: float
) -> Path:
    """Wait (bounded) until another party, HyperPod in managed mode, has mounted a file
    system at ``mount_path``, then until it is writable."""

    def mounted() -> bool | None:
        if is_mounted(system, mount_path):
            return True
        log(f"nothing is mounted at {mount_path} yet")
        return None

    system.wait_until(f"file system at {mount_path}", mounted, timeout_s, delay_s)
    target = system.path(mount_path)
    if not target.is_dir():
        raise ProvisionError(f"{mount_path} is listed as mounted but {target} is no directory")
    wait_writable(system, target, attempts, delay_s)
    return target
