"""This node's place in the cluster, from the resource config HyperPod writes
(/opt/ml/config/resource_config.json) and, in lifecycle mode, provisioning_parameters.json.

Every wait reads the resource config again on each attempt, as HyperPod may still be writing
it when the lifecycle scripts start.
"""

from __future__ import annotations

from pathlib import Path

from node_system import ProvisionError, System, load_json, log

RESOURCE_CONFIG = "/opt/ml/config/resource_config.json"


class Node:
    """This node's place in the cluster."""

    def __init__(self, role: str, group: str, partition: str | None, controller_ip: str):
        self.role = role  # "controller", "login" or "compute"
        self.group = group
        self.partition = partition
        self.controller_ip = controller_ip


def instance_ips(group: dict) -> list:
    return [instance.get("CustomerIpAddress") for instance in group.get("Instances") or []]


def group_ips(resource_config: dict, group_name: str) -> list:
    """The addresses of ``group_name``'s instances (empty when it has none yet)."""
    groups = resource_config.get("InstanceGroups") or []
    group: dict = next((g for g in groups if g.get("Name") == group_name), {})
    return [ip for ip in instance_ips(group) if ip]


def read_resource_config(path: Path) -> dict | None:
    """The resource config at ``path``, or None (logged) while it is missing or incomplete."""
    try:
        return load_json(path, "resource config")
    except ProvisionError as error:
        log(f"{error}; reading it again")
        return None


def wait_for_node_ip(system: System, config_path: Path, timeout_s: float, delay_s: float):
    """This node's address and the resource config listing it, once the network is up and
    the address is one the resource config lists (re-read on every attempt)."""

    def attempt():
        config = read_resource_config(config_path)
        address = system.local_address()
        if config is None or address is None:
            return None
        listed = {ip for group in config.get("InstanceGroups") or [] for ip in instance_ips(group)}
        if address not in listed:
            log(f"address {address} is not in the resource config (yet)")
            return None
        return address, config

    return system.wait_until("this node's address", attempt, timeout_s, delay_s)


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
    controller_ips = group_ips(resource_config, params["controller_group"])
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
