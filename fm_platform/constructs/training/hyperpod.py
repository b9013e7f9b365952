"""A SageMaker HyperPod cluster orchestrated by Slurm, in one of two Slurm modes.

Lifecycle mode (the default, HyperPod's legacy configuration): the lifecycle scripts read
``provisioning_parameters.json``, mount FSx for Lustre and start the Slurm daemons.
Managed mode (the API-driven configuration AWS recommends for new clusters: SageMaker
developer guide, "SageMaker HyperPod references" -> "SageMaker HyperPod Slurm
configuration"): each group's ``SlurmConfig`` and the cluster's ``Orchestrator.Slurm`` tell
HyperPod the Slurm topology, HyperPod mounts the file systems of ``InstanceStorageConfigs``,
and the scripts run after that (``OnInitComplete``) for what HyperPod does not do.
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from aws_cdk import Annotations, CfnTag, Resource
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IConstruct

from fm_platform.constructs.training.cluster_interface import (
    HyperPodClusterAttributes,
    IHyperPodCluster,
    ImportedHyperPodCluster,
    cluster_id_of,
)
from fm_platform.constructs.training.cluster_properties import (
    GroupContext,
    LustreMount,
    OpenZfsMount,
    group_property,
    orchestrator,
)
from fm_platform.constructs.training.cluster_role import (
    ClusterExecutionRole,
    cluster_execution_role,
    extend_given_role,
    network_interface_statements,
)
from fm_platform.constructs.training.instance_groups import (
    InstanceGroup,
    NodeRole,
    addresses_of_groups,
    provisioning_parameters,
    validate_instance_groups,
)
from fm_platform.constructs.training.node_health_alarm import (
    NodeHealthAlarm,
    node_health_alarm_name,
    node_health_rule_name,
)
from fm_platform.core.compliance import acknowledge_wildcard_resource
from fm_platform.core.options import Props, checked
from fm_platform.core.rollback_alarms import read_rollback_alarms_statement
from fm_platform.core.tokens import is_unresolved
from fm_platform.core.unknown_types import warn_unknown_accelerated_type
from fm_platform.rules.cluster import (
    CONTINUOUS,
    DEFAULT_SLURM_CONFIG_STRATEGY,
    LIFECYCLE,
    MANAGED,
    STANDARD,
    check_managed_mount_path,
    check_needs_continuous,
    check_needs_managed,
    check_node_provisioning,
    check_slurm_config_strategy,
    continuous_provisioning,
)
from fm_platform.rules.instance_groups import required_addresses
from fm_platform.rules.network import SUBNET_ADDRESS_MARGIN, check_subnet_capacity
from fm_platform.rules.problems import Problems


class SlurmMode(enum.Enum):
    """Who configures Slurm: HyperPod from the API (``MANAGED``, recommended by AWS for new
    clusters) or the lifecycle scripts from ``provisioning_parameters.json``
    (``LIFECYCLE``, HyperPod's legacy configuration)."""

    MANAGED = MANAGED
    LIFECYCLE = LIFECYCLE


class NodeProvisioning(enum.Enum):
    """How HyperPod provisions nodes: all of a group at once, or the operation fails
    (``STANDARD``), or as many as it can get while it keeps provisioning the rest
    (``CONTINUOUS``, ``NodeProvisioningMode: Continuous``)."""

    STANDARD = STANDARD
    CONTINUOUS = CONTINUOUS


class LifecycleSource(Protocol):
    """What the cluster needs from its lifecycle scripts (``LifecycleScripts`` fits).

    ``s3_uri`` must resolve through the upload (as ``LifecycleScripts.s3_uri`` does, via the
    deployed bucket's name), so that the cluster is created only once the files exist.
    """

    @property
    def s3_uri(self) -> str: ...

    @property
    def on_create_script(self) -> str: ...

    def read_statements(self) -> Sequence[iam.PolicyStatement]: ...


class FileSystemSource(Protocol):
    """What the cluster needs from its shared file system (``SharedFileSystem`` fits). In
    managed Slurm mode it also needs ``dns_name``, ``mount_name`` and ``mount_path`` (see
    :class:`LustreFileSystemSource`)."""

    @property
    def file_system(self) -> IConstruct: ...


class LustreFileSystemSource(FileSystemSource, Protocol):
    """An FSx for Lustre file system HyperPod mounts itself in managed Slurm mode
    (``SharedFileSystem`` fits)."""

    @property
    def dns_name(self) -> str: ...

    @property
    def mount_name(self) -> str: ...

    @property
    def mount_path(self) -> str: ...


class HomeFileSystemSource(Protocol):
    """An FSx for OpenZFS file system HyperPod mounts on every node in managed Slurm mode
    (``HomeFileSystem`` fits)."""

    @property
    def file_system(self) -> IConstruct: ...

    @property
    def dns_name(self) -> str: ...

    @property
    def mount_path(self) -> str: ...


class AccountingDatabaseSource(Protocol):
    """A MySQL-compatible database for Slurm accounting (``SlurmAccountingDatabase``
    fits): where it listens and the Secrets Manager secret with its user name and
    password."""

    @property
    def endpoint(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def secret_arn(self) -> str: ...

    def secret_read_statements(self) -> Sequence[iam.PolicyStatement]: ...


@dataclass(frozen=True, kw_only=True)
class HyperPodClusterOptions:
    """Plain options of :class:`HyperPodCluster` (the configuration's ``training`` keys
    too).

    instance_groups: the groups; exactly one CONTROLLER, at most one LOGIN, any WORKERs.
    cluster_name: by default none is set and CloudFormation generates one, so that a change
        needing replacement can proceed; a fixed name blocks replacement.
    node_recovery: ``Automatic`` (the default: HyperPod replaces faulty nodes) or ``None``.
    tags: tags on the cluster; by default none.
    slurm_mode: ``SlurmMode.LIFECYCLE`` (the default, so that existing clusters deploy
        unchanged) or ``SlurmMode.MANAGED`` (AWS's recommendation for new clusters).
        Switching a deployed cluster to managed is AWS's documented migration ("Migrating
        to API-driven Slurm configuration"; the scripts' provisioning_parameters.json is
        removed by the same deployment); there is no way back.
    slurm_config_strategy: managed mode's ``SlurmConfigStrategy``: ``Merge`` (HyperPod adds
        its partitions to slurm.conf and keeps manual edits), ``Managed`` (manual edits
        make the next update fail) or ``Overwrite`` (manual edits are overwritten). By
        default ``Merge`` is written with standard provisioning and nothing with continuous
        provisioning (which rejects the field and behaves as Merge).
    node_provisioning: ``NodeProvisioning.CONTINUOUS`` (managed mode only) or ``STANDARD``.
        By default continuous when something needs it (an accounting database, a group's
        ``min_count``), else standard (the property is left out).
    """

    instance_groups: Sequence[InstanceGroup]
    cluster_name: str | None = None
    node_recovery: str = "Automatic"
    tags: Mapping[str, str] | None = None
    slurm_mode: SlurmMode = SlurmMode.LIFECYCLE
    slurm_config_strategy: str | None = None
    node_provisioning: NodeProvisioning | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        groups = [g for g in self.instance_groups or () if g is not None]
        validate_instance_groups(problems, self.instance_groups or ())
        problems.check_shape("cluster_name", self.cluster_name, "ClusterName")
        problems.check_shape("node_recovery", self.node_recovery, "ClusterNodeRecovery")
        mode = _value(self.slurm_mode)
        provisioning = _value(self.node_provisioning)
        check_node_provisioning(problems, "node_provisioning", provisioning, slurm_mode=mode)
        for index, group in enumerate(self.instance_groups or ()):
            if group is not None:
                check_needs_continuous(
                    problems,
                    f"instance_groups[{index}].min_count",
                    group.min_count,
                    what="a minimum count",
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
                accounting=False,
                min_counts=any(g.min_count is not None for g in groups),
            ),
        )

    @property
    def managed(self) -> bool:
        """Whether HyperPod configures Slurm (managed mode)."""
        return self.slurm_mode is SlurmMode.MANAGED

    @property
    def required_ipv4_addresses(self) -> int | None:
        """Subnet addresses the groups take (see :func:`required_ipv4_addresses`), None when
        a group's count is unknown."""
        return required_addresses(
            [(g.instance_type, g.instance_count) for g in self.instance_groups or () if g]
        )


@dataclass(frozen=True, kw_only=True)
class HyperPodClusterProps(HyperPodClusterOptions, Props):
    """Options for :class:`HyperPodCluster`: the fields of :class:`HyperPodClusterOptions`,
    and

    subnet: the private subnet the instances' interfaces go in; when its CIDR is known at
        synth time it must hold every instance's addresses (see ``required_ipv4_addresses``).
    security_group: the cluster security group (all traffic within the group, both ways).
    lifecycle: the uploaded lifecycle scripts; the cluster is created after their upload.
    execution_role: the role the instances run with; by default a least-privilege role is
        created (managed instance policy, EC2 interface actions in this subnet, lifecycle
        read, ``fsx:DescribeFileSystems``). A role you pass gets the same grants added when
        it can be changed; for one that cannot (imported with ``mutable=False``), a synth
        warning lists the policy and statements to attach yourself.
    file_system: the shared file system; when given the cluster is created after it and the
        role may describe it (without that, HyperPod silently skips EFA setup for FSx). In
        managed mode HyperPod mounts it on every node (``FsxLustreConfig``; it must then
        give ``dns_name``, ``mount_name`` and ``mount_path``). By default no file system
        is wired.
    home_file_system: managed mode only: an FSx for OpenZFS file system HyperPod mounts on
        every node (``FsxOpenZfsConfig``), for the shared users' homes. By default none.
    accounting_database: managed mode only: the MySQL-compatible database Slurm accounting
        (slurmdbd) uses (``Orchestrator.Slurm.AccountingDatabase``; it needs continuous
        provisioning). The role may read its secret. By default none: HyperPod keeps
        accounting in a database on the controller node.
    """

    subnet: ec2.ISubnet
    security_group: ec2.ISecurityGroup
    lifecycle: LifecycleSource
    execution_role: iam.IRole | None = None
    file_system: FileSystemSource | None = None
    home_file_system: HomeFileSystemSource | None = None
    accounting_database: AccountingDatabaseSource | None = None

    @property
    def continuous(self) -> bool:
        """Whether the cluster provisions nodes continuously (see ``node_provisioning``)."""
        return continuous_provisioning(
            _value(self.node_provisioning),
            accounting=self.accounting_database is not None,
            min_counts=any(g.min_count is not None for g in self.instance_groups or () if g),
        )

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        mode = _value(props.slurm_mode)
        check_needs_managed(
            problems, "home_file_system", _given(props.home_file_system), slurm_mode=mode
        )
        check_needs_continuous(
            problems,
            "accounting_database",
            _given(props.accounting_database),
            what="an external accounting database",
            slurm_mode=mode,
            provisioning=_value(props.node_provisioning),
        )
        if props.accounting_database is not None:
            check_slurm_config_strategy(
                problems,
                "slurm_config_strategy",
                props.slurm_config_strategy,
                slurm_mode=mode,
                continuous=self.continuous,
            )
        if props.managed:
            props._check_managed_mounts(problems)
        cidr = _known_cidr(self.subnet)
        addresses, left_out = addresses_of_groups(props.instance_groups or ())
        check_subnet_capacity(
            problems,
            "subnet",
            cidr,
            ipaddress.IPv4Network(cidr, strict=False).prefixlen if cidr else None,
            addresses,
            left_out=left_out,
        )

    def _check_managed_mounts(self, problems: Problems) -> None:
        """In managed Slurm mode HyperPod mounts the file systems itself: the shared file
        system must say where it is, and both mount paths must be ones HyperPod accepts."""
        if self.file_system is not None:
            missing = [
                name
                for name in ("dns_name", "mount_name", "mount_path")
                if not hasattr(self.file_system, name)
            ]
            if missing:
                problems.add(
                    "file_system",
                    type(self.file_system).__name__,
                    "managed Slurm mode mounts the file system through InstanceStorageConfigs: "
                    f"it must give dns_name, mount_name and mount_path (missing: "
                    f"{', '.join(missing)}; SharedFileSystem has them)",
                )
            else:
                lustre = cast(LustreFileSystemSource, self.file_system)
                check_managed_mount_path(
                    problems, "file_system.mount_path", _known(lustre.mount_path)
                )
        if self.home_file_system is not None:
            check_managed_mount_path(
                problems, "home_file_system.mount_path", _known(self.home_file_system.mount_path)
            )


#: External accounting needs an AMI released after this date (SageMaker developer guide,
#: "Using an external accounting database with SageMaker HyperPod Slurm clusters").
ACCOUNTING_MIN_AMI_DATE = "2026-08-30"


def _warn_pinned_images(scope: Construct, groups: Sequence[InstanceGroup]) -> None:
    """Warn for each group whose pinned ``image_id`` the external accounting database may
    not run on: its release date cannot be known at synth time."""
    for index, group in enumerate(groups):
        if group.image_id is not None:
            Annotations.of(scope).add_warning_v2(
                "fm_platform:accountingPinnedImage",
                f"instance_groups[{index}].image_id={group.image_id!r}: the external Slurm "
                f"accounting database needs a HyperPod AMI released after "
                f"{ACCOUNTING_MIN_AMI_DATE}; check this image's date, or leave image_id "
                "unset for HyperPod's latest",
            )


def _rollback_alarm_names(
    groups: Sequence[InstanceGroup], node_health_alarm: str | None
) -> list[str]:
    """Every alarm a scheduled update of ``groups`` rolls back on, each once."""
    names = [
        name
        for group in groups
        if group.scheduled_update is not None
        for name in group.scheduled_update.rollback_alarms
    ]
    if node_health_alarm is not None:
        names.append(node_health_alarm)
    return list(dict.fromkeys(names))


def _value(option: enum.Enum | None) -> str | None:
    """An enum option's value, None when unset (or of the wrong type, already reported)."""
    return option.value if isinstance(option, enum.Enum) else None


def _given(reference: object) -> str | None:
    """``"given"`` for a reference that is set, for the rules' messages."""
    return None if reference is None else "given"


def _known(value: str) -> str | None:
    """``value`` when known at synth time, else None."""
    return None if is_unresolved(value) else value


def required_ipv4_addresses(groups: Sequence[InstanceGroup]) -> int:
    """Subnet addresses the groups take: for each instance, one per EFA interface (at least
    one), plus :data:`SUBNET_ADDRESS_MARGIN`."""
    return required_addresses([(g.instance_type, g.instance_count) for g in groups]) or 0


def _known_cidr(subnet: ec2.ISubnet) -> str | None:
    """The subnet's CIDR when it is known at synth time, else None."""
    try:
        cidr = subnet.ipv4_cidr_block
    except Exception:  # noqa: BLE001 - imported subnets without a CIDR raise on access
        return None
    if not cidr or is_unresolved(cidr):
        return None
    return cidr


class HyperPodCluster(Resource):
    """A SageMaker HyperPod cluster with Slurm, one ``AWS::SageMaker::Cluster`` (a CDK
    ``Resource``; its ``apply_removal_policy`` applies to the cluster). It implements
    :class:`~fm_platform.constructs.training.cluster_interface.IHyperPodCluster`, as do
    the clusters :meth:`from_cluster_name`, :meth:`from_cluster_arn` and
    :meth:`from_cluster_attributes` import.

    Lifecycle mode: every group runs the lifecycle scripts' entry point as ``OnCreate``;
    the scripts read ``provisioning_parameters.json`` (see :func:`provisioning_parameters`)
    to set each node up as controller, login or compute node. No per-group ``SlurmConfig``
    is set: HyperPod rejects it together with ``provisioning_parameters.json``.

    Managed mode: every group has a ``SlurmConfig`` from its role (Controller, Login,
    Compute with its partition), the cluster an ``Orchestrator.Slurm`` (the strategy, the
    accounting database), HyperPod mounts the file system (and the home file system) on
    every node, and the scripts run as ``OnInitComplete``, after HyperPod's own setup.

    Both modes: continuous provisioning and each group's minimum count, capacity type,
    image and scheduled AMI update, as their options say. A scheduled update rolls back on
    the group's own alarms and on ``node_health_alarm`` (:class:`NodeHealthAlarm`), created
    when a group has a scheduled update.

    Attributes: ``cluster`` (the CfnCluster), ``cluster_arn``, ``cluster_id`` (the last part
    of the ARN, used in SSM targets), ``cluster_name`` (the given name; None when
    CloudFormation generates one, as it returns no generated name),
    ``cluster_name_or_arn`` (the given name, else the ARN: what every SageMaker cluster
    API takes as ``ClusterName``), ``execution_role``, ``instance_groups``,
    ``controller_group_name``, ``slurm_mode``, ``continuous`` (whether nodes are provisioned
    continuously),
    ``node_health_alarm`` (None without scheduled updates). Construct IDs ``Resource``,
    ``ExecutionRole`` and ``NodeHealth`` are stable.
    """

    def __init__(self, scope: Construct, construct_id: str, props: HyperPodClusterProps) -> None:
        """Create the cluster and its execution role under ``scope``; ``props`` is validated
        first."""
        props.validate()
        super().__init__(scope, construct_id, physical_name=props.cluster_name)
        for index, group in enumerate(props.instance_groups):
            warn_unknown_accelerated_type(
                self, f"instance_groups[{index}].instance_type", group.instance_type
            )
        if props.accounting_database is not None:
            _warn_pinned_images(self, props.instance_groups)
        self.instance_groups: tuple[InstanceGroup, ...] = tuple(props.instance_groups)
        self.controller_group_name: str = next(
            g.name for g in self.instance_groups if g.role is NodeRole.CONTROLLER
        )
        self.slurm_mode: SlurmMode = props.slurm_mode
        self.continuous: bool = props.continuous
        self.execution_role: iam.IRole = props.execution_role or cluster_execution_role(
            self, "ExecutionRole", subnet=props.subnet, security_group=props.security_group
        )
        updates = any(g.scheduled_update is not None for g in self.instance_groups)
        # The alarm is named and created before the cluster; its rule, which filters on
        # the cluster's ARN, after it.
        alarm_name = node_health_alarm_name(self) if updates else None
        self._grant(props, _rollback_alarm_names(self.instance_groups, alarm_name))
        context = self._group_context(props, [alarm_name] if alarm_name else [])

        self.cluster = sagemaker.CfnCluster(
            self,
            "Resource",
            cluster_name=props.cluster_name,
            node_recovery=props.node_recovery,
            instance_groups=[group_property(group, context) for group in self.instance_groups],
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                subnets=[props.subnet.subnet_id],
                security_group_ids=[props.security_group.security_group_id],
            ),
            orchestrator=self._orchestrator(props) if props.managed else None,
            node_provisioning_mode="Continuous" if self.continuous else None,
            tags=[CfnTag(key=k, value=v) for k, v in sorted((props.tags or {}).items())] or None,
        )
        # Create the cluster only once its role's permissions exist (the role itself is
        # already a dependency through its ARN).
        self.cluster.node.add_dependency(
            self.execution_role.policy
            if isinstance(self.execution_role, ClusterExecutionRole)
            else self.execution_role
        )
        if props.file_system is not None:
            self.cluster.node.add_dependency(props.file_system.file_system)
        if props.home_file_system is not None:
            self.cluster.node.add_dependency(props.home_file_system.file_system)

        self.cluster_arn: str = self.cluster.attr_cluster_arn
        self.cluster_id: str = cluster_id_of(self.cluster_arn)
        self.cluster_name: str | None = props.cluster_name
        self.cluster_name_or_arn: str = props.cluster_name or self.cluster_arn
        self.node_health_alarm: NodeHealthAlarm | None = None
        if alarm_name is not None:
            self.node_health_alarm = NodeHealthAlarm(
                self,
                "NodeHealth",
                cluster_arn=self.cluster_arn,
                alarm_name=alarm_name,
                rule_name=node_health_rule_name(self),
            )
            # HyperPod refuses rollback alarms that do not exist yet.
            self.cluster.add_dependency(self.node_health_alarm.alarm)

    @staticmethod
    def from_cluster_name(
        scope: Construct, construct_id: str, cluster_name: str
    ) -> IHyperPodCluster:
        """An existing cluster, by name (its ARN, which ends in a generated ID, unknown).
        Nothing is created."""
        return ImportedHyperPodCluster(
            scope, construct_id, HyperPodClusterAttributes(cluster_name=cluster_name)
        )

    @staticmethod
    def from_cluster_arn(scope: Construct, construct_id: str, cluster_arn: str) -> IHyperPodCluster:
        """An existing cluster, by ARN (its name unknown: the ARN does not hold it).
        Nothing is created."""
        return ImportedHyperPodCluster(
            scope, construct_id, HyperPodClusterAttributes(cluster_arn=cluster_arn)
        )

    @staticmethod
    def from_cluster_attributes(
        scope: Construct, construct_id: str, attrs: HyperPodClusterAttributes
    ) -> IHyperPodCluster:
        """An existing cluster described by ``attrs``. Nothing is created."""
        return ImportedHyperPodCluster(scope, construct_id, attrs)

    def _grant(self, props: HyperPodClusterProps, rollback_alarms: Sequence[str]) -> None:
        """The lifecycle read, the file systems' description, the accounting secret and the
        scheduled updates' rollback alarms."""
        statements = list(props.lifecycle.read_statements())
        if rollback_alarms:
            # HyperPod reads the rollback alarms with the execution role.
            statements.append(
                read_rollback_alarms_statement(self, rollback_alarms, sid="ReadRollbackAlarms")
            )
        if props.file_system is not None or props.home_file_system is not None:
            statements.append(_describe_file_systems_statement())
        if props.accounting_database is not None:
            statements += props.accounting_database.secret_read_statements()
        if props.execution_role is None:
            for statement in statements:
                self.execution_role.add_to_principal_policy(statement)
            _acknowledge_lifecycle_read(self.execution_role, props.lifecycle)
        else:
            network = network_interface_statements(
                self, subnet=props.subnet, security_group=props.security_group
            )
            extend_given_role(self, self.execution_role, [*network, *statements])

    def _group_context(self, props: HyperPodClusterProps, rollback: list[str]) -> GroupContext:
        lustre = None
        if props.managed and props.file_system is not None:
            # validate() made sure it has the attributes of a LustreFileSystemSource.
            fs = cast(LustreFileSystemSource, props.file_system)
            lustre = LustreMount(
                dns_name=fs.dns_name, mount_name=fs.mount_name, mount_path=fs.mount_path
            )
        home = None
        if props.managed and props.home_file_system is not None:
            home = OpenZfsMount(
                dns_name=props.home_file_system.dns_name,
                mount_path=props.home_file_system.mount_path,
            )
        return GroupContext(
            execution_role_arn=self.execution_role.role_arn,
            source_s3_uri=props.lifecycle.s3_uri,
            script=props.lifecycle.on_create_script,
            managed=props.managed,
            lustre=lustre,
            home=home,
            rollback_alarms=rollback,
        )

    def _orchestrator(
        self, props: HyperPodClusterProps
    ) -> sagemaker.CfnCluster.OrchestratorProperty:
        strategy = props.slurm_config_strategy
        if strategy is None and not self.continuous:
            strategy = DEFAULT_SLURM_CONFIG_STRATEGY
        database = props.accounting_database
        return orchestrator(
            strategy=strategy,
            accounting=(
                sagemaker.CfnCluster.ClusterAccountingDatabaseProperty(
                    endpoint=database.endpoint,
                    port=database.port,
                    secret_arn=database.secret_arn,
                )
                if database is not None
                else None
            ),
        )


def _describe_file_systems_statement() -> iam.PolicyStatement:
    # DescribeFileSystems without file-system IDs lists every file system of the account,
    # and is authorised against "*"; HyperPod calls it to set FSx up over EFA.
    return iam.PolicyStatement(
        sid="DescribeSharedFileSystem", actions=["fsx:DescribeFileSystems"], resources=["*"]
    )


def _acknowledge_lifecycle_read(role: iam.IRole, lifecycle: LifecycleSource) -> None:
    """Acknowledge the object wildcard of the lifecycle read grant, ``<prefix>/*``: HyperPod
    downloads every file under the prefix, whose names the scripts' authors choose."""
    bucket = getattr(lifecycle, "bucket", None)
    prefix = getattr(lifecycle, "prefix", None)
    if bucket is None or prefix is None:
        return
    acknowledge_wildcard_resource(
        role,
        "HyperPod copies every file under the lifecycle-script prefix to each node before "
        "running the on-create script, so the role reads all objects under that prefix "
        "(and no other object of the bucket).",
        bucket.arn_for_objects(f"{prefix.strip('/')}/*"),
        after_references=True,
    )


__all__ = [
    "AccountingDatabaseSource",
    "FileSystemSource",
    "HomeFileSystemSource",
    "HyperPodCluster",
    "HyperPodClusterOptions",
    "HyperPodClusterProps",
    "InstanceGroup",
    "LifecycleSource",
    "LustreFileSystemSource",
    "NodeProvisioning",
    "NodeRole",
    "SlurmMode",
    "SUBNET_ADDRESS_MARGIN",
    "provisioning_parameters",
    "required_ipv4_addresses",
]
