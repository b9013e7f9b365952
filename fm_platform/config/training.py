"""The training side of the app's configuration: the options of the network, the file
system, the cluster and its lifecycle scripts, in one flat set of keys, and the optional
home file system and Slurm accounting database."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fm_platform.constructs.observability.training_alarms import TrainingAlarmOptions
from fm_platform.constructs.training.eks_options import EksOptions, Orchestrator
from fm_platform.constructs.training.filesystem import SharedFileSystemOptions
from fm_platform.constructs.training.home_filesystem import HomeFileSystemOptions
from fm_platform.constructs.training.hyperpod import HyperPodClusterOptions
from fm_platform.constructs.training.instance_groups import (
    InstanceGroup,
    NodeRole,
    addresses_of_groups,
)
from fm_platform.constructs.training.lifecycle import LifecycleScriptsOptions
from fm_platform.constructs.training.network import ClusterNetworkOptions
from fm_platform.rules.cluster import (
    check_managed_mount_path,
    check_needs_continuous,
    check_needs_managed,
    check_slurm_config_strategy,
    continuous_provisioning,
)
from fm_platform.rules.instance_groups import addresses_of_known_groups
from fm_platform.rules.network import check_subnet_capacity, subnet_mask_in_range, vpc_mask_of
from fm_platform.rules.problems import Problems
from fm_platform.rules.types import read

#: The training walkthrough's example: one ml.m5.12xlarge head node and four
#: ml.trn1.32xlarge workers in the Slurm partition "dev".
DEFAULT_INSTANCE_GROUPS = (
    InstanceGroup(
        name="controller",
        role=NodeRole.CONTROLLER,
        instance_type="ml.m5.12xlarge",
        instance_count=1,
    ),
    InstanceGroup(
        name="workers",
        role=NodeRole.WORKER,
        instance_type="ml.trn1.32xlarge",
        instance_count=4,
        partition="dev",
    ),
)


@dataclass(frozen=True, kw_only=True)
class TrainingConfig(
    ClusterNetworkOptions,
    SharedFileSystemOptions,
    HyperPodClusterOptions,
    LifecycleScriptsOptions,
    TrainingAlarmOptions,
):
    """Everything a user configures in the training stacks: the fields (and defaults) of
    :class:`ClusterNetworkOptions` (``availability_zone_id``, ``vpc_cidr``,
    ``private_subnet_cidr_mask``, ``public_subnet_cidr_mask``, ``flow_log_retention``,
    ``restrict_default_security_group``),
    :class:`SharedFileSystemOptions` (``storage_capacity_gib``,
    ``per_unit_storage_throughput_mbps``, ``mount_path``, ``removal_policy``),
    :class:`HyperPodClusterOptions` (``instance_groups``, ``cluster_name``,
    ``node_recovery``, ``tags``, ``slurm_mode``, ``slurm_config_strategy``,
    ``node_provisioning``), :class:`LifecycleScriptsOptions` (``assets_path``,
    ``prefix``, ``shared_users``) and :class:`TrainingAlarmOptions`
    (``fsx_free_capacity_percent``, ``lifecycle_error_alarm``, ``cluster_events``,
    ``sdk_function_reserved_concurrency``), except:

    instance_groups: by default a controller group "controller" (one ml.m5.12xlarge) and a
        worker group "workers" (four ml.trn1.32xlarge, partition "dev").
    slurm_accounting: add an Aurora MySQL Serverless v2 database for Slurm accounting to
        the data stack and connect the cluster's slurmdbd to it (managed Slurm mode; turns
        continuous provisioning on). By default false: HyperPod keeps accounting in a
        database on the controller node.
    home_file_system: an FSx for OpenZFS file system (:class:`HomeFileSystemOptions`) in
        the data stack that HyperPod mounts on every node for the users' homes (managed
        Slurm mode); by default none.
    orchestrator: ``slurm`` (the default) or ``eks``: a HyperPod cluster orchestrated by
        Amazon EKS, configured by ``eks`` (the Slurm keys ``instance_groups``,
        ``slurm_mode``, ``slurm_config_strategy``, ``node_provisioning``,
        ``slurm_accounting``, ``home_file_system``, ``shared_users`` do not apply).
    eks: the EKS cluster and HyperPod's options with EKS (:class:`EksOptions`); required
        with ``orchestrator: eks``, refused otherwise.
    """

    instance_groups: tuple[InstanceGroup, ...] = DEFAULT_INSTANCE_GROUPS
    slurm_accounting: bool = False
    home_file_system: HomeFileSystemOptions | None = None
    orchestrator: Orchestrator = Orchestrator.SLURM
    eks: EksOptions | None = None

    @property
    def uses_eks(self) -> bool:
        """Whether the cluster is orchestrated by Amazon EKS."""
        return self.orchestrator is Orchestrator.EKS

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], into: Problems | None = None) -> TrainingConfig:
        """Read from JSON-like data (a config file or ``cdk.json`` context): keys are the
        field names, missing keys keep their defaults. Every problem is one error naming
        the key; with ``into``, problems are recorded there and the config is built all
        the same (``None`` where a value was missing or wrong)."""
        problems = Problems.within(into, "TrainingConfig")
        config = read(problems, "", data, cls)
        problems.raise_if_any()
        return config

    def check(self, problems: Problems) -> None:
        """Record every problem the training stacks' constructs would report, under the
        configuration's keys."""
        ClusterNetworkOptions.check(self, problems)
        SharedFileSystemOptions.check(self, problems)
        HyperPodClusterOptions.check(self, problems)
        # Another network mistake (the zone, the VPC's block) hides nothing here.
        if subnet_mask_in_range(self.private_subnet_cidr_mask):
            # Groups whose type or count is wrong (already reported) are left out, so that
            # the others' need is still checked: a lower bound, which says so.
            addresses, left_out = self._addresses()
            check_subnet_capacity(
                problems,
                "private_subnet_cidr_mask",
                self.private_subnet_cidr_mask,
                self.private_subnet_cidr_mask,
                addresses,
                vpc_mask=vpc_mask_of(self.vpc_cidr),
                left_out=left_out,
            )
        LifecycleScriptsOptions.check(self, problems)
        TrainingAlarmOptions.check(self, problems)
        self.check_slurm_features(problems)
        self.check_orchestrator(problems)

    def _addresses(self) -> tuple[int, tuple[str, ...]]:
        """Subnet addresses of the cluster's nodes (see :func:`addresses_of_groups`)."""
        if self.uses_eks and self.eks is not None:
            return addresses_of_known_groups(
                [
                    (g.name, g.instance_type, g.instance_count)
                    for g in self.eks.instance_groups or ()
                    if g is not None
                ]
            )
        return addresses_of_groups(self.instance_groups or ())

    def check_orchestrator(self, problems: Problems) -> None:
        """``eks`` is given exactly when the orchestrator is EKS, and then checked."""
        if self.uses_eks:
            if self.eks is None:
                problems.add(
                    "eks",
                    None,
                    "orchestrator eks needs the eks keys: at least instance_groups and "
                    "administrators (see docs/training-eks.md)",
                )
            else:
                self.eks.check(problems.scoped("eks."))
            if self.slurm_accounting or self.home_file_system is not None:
                problems.add(
                    "orchestrator",
                    "eks",
                    "slurm_accounting and home_file_system are Slurm features; remove them",
                )
        elif self.eks is not None:
            problems.add(
                "eks",
                "given",
                "the eks keys are read only with orchestrator eks; set orchestrator to eks "
                "or remove them",
            )

    def check_slurm_features(self, problems: Problems) -> None:
        """What the data stack adds for the cluster, against the cluster's Slurm mode and
        provisioning; the file systems' mount paths where HyperPod mounts them."""
        mode = getattr(self.slurm_mode, "value", None)
        provisioning = getattr(self.node_provisioning, "value", None)
        check_needs_continuous(
            problems,
            "slurm_accounting",
            self.slurm_accounting,
            what="an external accounting database",
            slurm_mode=mode,
            provisioning=provisioning,
        )
        check_slurm_config_strategy(
            problems,
            "slurm_config_strategy",
            self.slurm_config_strategy,
            slurm_mode=mode,
            continuous=continuous_provisioning(
                provisioning,
                accounting=bool(self.slurm_accounting),
                min_counts=any(g.min_count is not None for g in self.instance_groups or () if g),
            ),
        )
        check_needs_managed(
            problems,
            "home_file_system",
            "given" if self.home_file_system is not None else None,
            slurm_mode=mode,
        )
        if self.home_file_system is not None:
            self.home_file_system.check(problems, "home_file_system.")
        if self.managed:
            check_managed_mount_path(problems, "mount_path", self.mount_path)
