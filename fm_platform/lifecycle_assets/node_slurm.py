"""Slurm on a node in lifecycle mode: the controller waits until the slurm.conf the HyperPod
agent writes names the controller's address from the resource config, then starts slurmctld;
login and compute nodes run configless slurmd pointed at the controller.
"""

from __future__ import annotations

import re
from pathlib import Path

from node_cluster import Node, group_ips, read_resource_config
from node_system import ProvisionError, System, log

SLURM_CONF = "/opt/slurm/etc/slurm.conf"
# The unit the HyperPod image installs, and where Slurm's packages put theirs.
SLURMD_UNIT = "/etc/systemd/system/slurmd.service"
VENDOR_SLURMD_UNITS = (
    "/usr/lib/systemd/system/slurmd.service",
    "/lib/systemd/system/slurmd.service",
)
# slurm.conf keys naming the controller (ControlMachine before Slurm 18.08); keys are
# case-insensitive. A value is ``host`` or ``host(address)``.
CONTROLLER_KEY = re.compile(r"^\s*(?:SlurmctldHost|ControlMachine)\s*=\s*(\S+)", re.I | re.M)


def ec2_hostname(address: str) -> str:
    """The private host name EC2 gives ``address`` (10.1.0.10 -> ip-10-1-0-10)."""
    return "ip-" + address.replace(".", "-")


def slurm_conf_controller(text: str, addresses) -> str | None:
    """The first ``SlurmctldHost`` / ``ControlMachine`` value in ``text`` that names one of
    ``addresses``, by address or by its EC2 host name (short or fully qualified), else None.
    A controller line naming another host does not count."""
    wanted = set(addresses)
    names = {ec2_hostname(address) for address in wanted}
    for match in CONTROLLER_KEY.finditer(text):
        value = match.group(1)
        for token in re.split(r"[()\s,]+", value):
            if token in wanted or token.split(".", 1)[0] in names:
                return value
    return None


def wait_for_slurm_conf(
    system: System, config_path: Path, controller_group: str, timeout_s: float, delay_s: float
) -> str:
    """Wait until the HyperPod agent's slurm.conf names an address of ``controller_group``;
    both files are read again on every attempt. Returns the controller value."""
    conf = system.path(SLURM_CONF)

    def attempt() -> str | None:
        config = read_resource_config(config_path)
        if config is None:
            return None
        addresses = group_ips(config, controller_group)
        if not addresses:
            log(f"the resource config lists no instance of {controller_group!r} yet")
            return None
        if not conf.exists():
            log(f"{conf} not written yet")
            return None
        found = slurm_conf_controller(conf.read_text(), addresses)
        if found is None:
            log(f"{conf} does not name the controller {', '.join(addresses)} yet")
        return found

    controller = system.wait_until(
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
