"""Typed HyperPod instance groups, their validation, the Slurm provisioning parameters the
lifecycle scripts read in lifecycle Slurm mode and the node setup they read in managed
Slurm mode."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fm_platform.rules.instance_groups import (
    ON_DEMAND,
    SLURM_NODE_TYPES,
    SPOT,
    addresses_of_known_groups,
    addresses_per_instance,
    check_capacity,
    check_group_roles,
    check_image_id,
    check_instance_group,
    check_min_count,
    supports_deep_health_checks,
)
from fm_platform.rules.lifecycle import NODE_SETUP_VERSION
from fm_platform.rules.problems import Problems
from fm_platform.rules.scheduled_update import check_scheduled_update

#: The checks run on accelerated worker groups when ``deep_health_checks`` is not given.
DEFAULT_DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")

#: Size of the extra EBS volume (mounted at /opt/sagemaker) when a group does not set one.
DEFAULT_EBS_VOLUME_GIB = 500

PROVISIONING_PARAMETERS_VERSION = "1.0.0"


class NodeRole(enum.Enum):
    """What the nodes of an instance group do in the Slurm cluster."""

    CONTROLLER = "controller"
    LOGIN = "login"
    WORKER = "worker"

    @property
    def slurm_node_type(self) -> str:
        """The group's ``SlurmConfig.NodeType`` in managed Slurm mode (Controller, Login,
        Compute)."""
        return SLURM_NODE_TYPES[self.value]


class Capacity(enum.Enum):
    """The capacity type of an instance group (``CapacityRequirements``)."""

    ON_DEMAND = ON_DEMAND
    SPOT = SPOT


@dataclass(frozen=True, kw_only=True)
class ScheduledUpdate:
    """A scheduled AMI update of an instance group (``ScheduledUpdateConfig``): HyperPod
    patches the group's nodes in rolling batches and rolls back when an alarm fires.

    cron: when, as ``cron(minutes hours day-of-month month day-of-week year)`` in UTC, in the
        form the CloudFormation schema allows (one of day-of-month and day-of-week is
        ``?``), e.g. ``cron(0 3 ? * SUN *)``.
    batch_percent / batch_count: how many of the group's nodes are updated at a time, as a
        percentage (1-100) or a number of instances (at least 1); give at most one. By
        default neither: HyperPod's own batch size.
    wait_s: seconds to wait between batches (0-3600); by default HyperPod's.
    rollback_alarms: names of CloudWatch alarms whose ALARM state rolls the update back (at
        most 9). The cluster always adds its own alarm on unhealthy nodes. By default none.
    """

    cron: str
    batch_percent: int | None = None
    batch_count: int | None = None
    wait_s: int | None = None
    rollback_alarms: tuple[str, ...] = ()

    def check(self, problems: Problems, field: str) -> None:
        """Record every problem of this update in ``problems``, under ``field``."""
        check_scheduled_update(
            problems,
            field,
            cron=self.cron,
            batch_percent=self.batch_percent,
            batch_count=self.batch_count,
            wait_s=self.wait_s,
            rollback_alarms=self.rollback_alarms,
        )


@dataclass(frozen=True, kw_only=True)
class InstanceGroup:
    """One HyperPod instance group.

    name: the group's name (1-63 letters, digits and hyphens); changing it replaces the
        cluster.
    role: controller (exactly one group, of exactly one instance), login (at most one) or
        worker.
    instance_type: an ``ml.*`` type HyperPod offers (botocore enum ``ClusterInstanceType``).
    instance_count: how many instances the group has.
    threads_per_core: 1 (hyperthreading off, the default, as HPC jobs prefer) or 2.
    ebs_volume_gib: size of the extra EBS volume attached to every instance and mounted at
        /opt/sagemaker; by default 500 GiB. ``None`` attaches no extra volume.
    deep_health_checks: the on-start deep health checks; by default InstanceStress and
        InstanceConnectivity for worker groups of NVIDIA GPU or Trainium instances (the
        families the checks support) and none otherwise. ``()`` turns them off.
    training_plan_arn: a SageMaker training plan whose reserved capacity the group uses; by
        default on-demand capacity.
    partition: the Slurm partition of a worker group (one; letters, digits and hyphens);
        by default the group name. Only worker groups have one. In managed Slurm mode it is
        the group's ``SlurmConfig.PartitionNames`` (HyperPod also puts every node in its
        universal ``dev`` partition), in lifecycle mode its ``partition_name`` in
        provisioning_parameters.json.
    min_count: how many of the group's instances must be up for the group to turn
        InService (``MinInstanceCount``, at most ``instance_count``); needs continuous node
        provisioning (the cluster turns it on unless it is set to standard). By default
        none: all of them.
    capacity: ``Capacity.ON_DEMAND`` sets ``CapacityRequirements`` explicitly;
        ``Capacity.SPOT`` is refused (AWS documents Spot only for EKS clusters). By default
        unset (on-demand, or the training plan's reserved capacity). HyperPod cannot change
        it on an existing group.
    image_id: the AMI the group runs (``ami-...``): a HyperPod AMI or your own (unencrypted,
        owned by the account). By default unset: HyperPod's latest. HyperPod's
        release-version pin (``ImageReleaseVersion``) is EKS-only.
    scheduled_update: a :class:`ScheduledUpdate` that patches the group's AMI on a
        schedule; by default none.
    """

    name: str
    role: NodeRole
    instance_type: str
    instance_count: int
    threads_per_core: int = 1
    ebs_volume_gib: int | None = DEFAULT_EBS_VOLUME_GIB
    deep_health_checks: tuple[str, ...] | None = None
    training_plan_arn: str | None = None
    partition: str | None = None
    min_count: int | None = None
    capacity: Capacity | None = None
    image_id: str | None = None
    scheduled_update: ScheduledUpdate | None = None

    @property
    def slurm_partition(self) -> str | None:
        """The Slurm partition of a worker group (None for controller and login groups)."""
        if self.role is not NodeRole.WORKER:
            return None
        return self.partition or self.name

    @property
    def effective_deep_health_checks(self) -> tuple[str, ...]:
        """The deep health checks the group runs on start, defaults applied."""
        if self.deep_health_checks is not None:
            return tuple(self.deep_health_checks)
        if self.role is NodeRole.WORKER and supports_deep_health_checks(self.instance_type):
            return DEFAULT_DEEP_HEALTH_CHECKS
        return ()

    @property
    def ipv4_addresses_per_instance(self) -> int:
        """Subnet addresses one instance takes: one per EFA interface, at least one.
        Types missing from the instance data file count as one."""
        return addresses_per_instance(self.instance_type)

    def check(self, problems: Problems, field: str) -> None:
        """Record every problem of this group in ``problems``, under ``field``."""
        check_instance_group(
            problems,
            field,
            name=self.name,
            role=self.role.value if isinstance(self.role, NodeRole) else None,
            instance_type=self.instance_type,
            instance_count=self.instance_count,
            threads_per_core=self.threads_per_core,
            ebs_volume_gib=self.ebs_volume_gib,
            deep_health_checks=self.deep_health_checks,
            training_plan_arn=self.training_plan_arn,
            partition=self.partition,
        )
        check_min_count(problems, f"{field}.min_count", self.min_count, self.instance_count)
        check_capacity(
            problems,
            f"{field}.capacity",
            self.capacity.value if isinstance(self.capacity, Capacity) else None,
        )
        check_image_id(problems, f"{field}.image_id", self.image_id)
        if self.scheduled_update is not None:
            self.scheduled_update.check(problems, f"{field}.scheduled_update")


def addresses_of_groups(groups: Sequence[InstanceGroup | None]) -> tuple[int, tuple[str, ...]]:
    """The subnet addresses of the groups whose type and count are known, and the names
    of the others (:func:`~fm_platform.rules.instance_groups.addresses_of_known_groups`;
    a group without a name is named by its position)."""
    return addresses_of_known_groups(
        [
            (
                (group and group.name) or f"instance_groups[{index}]",
                group.instance_type if group else None,
                group.instance_count if group else None,
            )
            for index, group in enumerate(groups)
        ]
    )


def validate_instance_groups(
    problems: Problems, groups: Sequence[InstanceGroup | None], field: str = "instance_groups"
) -> None:
    """Add every problem with ``groups`` to ``problems``: names, roles, types, counts,
    threads per core, EBS size, deep health checks, training plans, partitions, minimum
    counts, capacity types, image pins and scheduled updates."""
    for index, group in enumerate(groups):
        if group is not None:
            group.check(problems, f"{field}[{index}]")
    check_group_roles(
        problems,
        field,
        [
            (
                group.name if group is not None else None,
                group.role.value
                if group is not None and isinstance(group.role, NodeRole)
                else None,
            )
            for group in groups
        ],
    )


def provisioning_parameters(
    groups: Sequence[InstanceGroup],
    *,
    fsx_dns_name: str,
    fsx_mount_name: str,
    fsx_mount_path: str = "/fsx",
) -> dict[str, Any]:
    """The ``provisioning_parameters.json`` document the lifecycle scripts read to learn each
    node's role, the worker partitions and the FSx for Lustre mount."""
    controller = next((g.name for g in groups if g.role is NodeRole.CONTROLLER), None)
    if controller is None:
        roles = {g.name: g.role.name for g in groups}
        raise ValueError(
            f"instance_groups={roles!r}: provisioning parameters need exactly one group with "
            "role CONTROLLER (the Slurm head node)"
        )
    login = next((g.name for g in groups if g.role is NodeRole.LOGIN), None)
    parameters: dict[str, Any] = {
        "version": PROVISIONING_PARAMETERS_VERSION,
        "workload_manager": "slurm",
        "controller_group": controller,
    }
    if login is not None:
        parameters["login_group"] = login
    parameters["worker_groups"] = [
        {"instance_group_name": g.name, "partition_name": g.slurm_partition}
        for g in groups
        if g.role is NodeRole.WORKER
    ]
    parameters["fsx_dns_name"] = fsx_dns_name
    parameters["fsx_mountname"] = fsx_mount_name
    parameters["fsx_mount_path"] = fsx_mount_path
    return parameters


def node_setup(
    *,
    fsx_mount_path: str,
    home_mount_path: str | None = None,
    fsx_dns_name: str | None = None,
    fsx_mount_name: str | None = None,
) -> dict[str, Any]:
    """The ``fmp_node_setup.json`` document the lifecycle scripts read in managed Slurm
    mode: where HyperPod mounts FSx for Lustre (and the home file system, when there is
    one). ``fsx_dns_name`` and ``fsx_mount_name`` go together and only where HyperPod does
    not mount FSx itself (the scripts then mount it)."""
    setup: dict[str, Any] = {
        "version": NODE_SETUP_VERSION,
        "mode": "managed",
        "fsx_mount_path": fsx_mount_path,
    }
    if fsx_dns_name is not None or fsx_mount_name is not None:
        setup["fsx_dns_name"] = fsx_dns_name
        setup["fsx_mountname"] = fsx_mount_name
    if home_mount_path is not None:
        setup["home_mount_path"] = home_mount_path
    return setup
