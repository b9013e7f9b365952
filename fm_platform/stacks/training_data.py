"""The training cluster's stateful half: what must outlive the cluster (the FSx for Lustre
file system, the lifecycle-script bucket, keys and logs, and when configured the home file
system and the Slurm accounting database) and the network they live in."""

from __future__ import annotations

from typing import Any, cast

from aws_cdk import CfnOutput, CfnResource, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from fm_platform.config.training import TrainingConfig
from fm_platform.constructs.observability.topic import NotificationTopicOptions, notification_topic
from fm_platform.constructs.observability.training_alarms import FileSystemCapacityAlarm
from fm_platform.constructs.training.accounting import (
    SlurmAccountingDatabase,
    SlurmAccountingDatabaseProps,
)
from fm_platform.constructs.training.filesystem import (
    SharedFileSystem,
    SharedFileSystemOptions,
    SharedFileSystemProps,
)
from fm_platform.constructs.training.home_filesystem import (
    HomeFileSystem,
    HomeFileSystemOptions,
    HomeFileSystemProps,
)
from fm_platform.constructs.training.lifecycle import LifecycleStorage
from fm_platform.constructs.training.network import (
    ClusterNetwork,
    ClusterNetworkOptions,
    ClusterNetworkProps,
)
from fm_platform.core.options import options_values
from fm_platform.core.tokens import known


class TrainingDataStack(Stack):
    """The network, file system and lifecycle storage of a training cluster, kept apart from
    the cluster (:class:`~fm_platform.stacks.training.TrainingStack`) so that deleting the
    cluster's stack never touches them and the cluster can be recreated on its own.

    Composition (construct IDs are stable): ``Network`` (:class:`ClusterNetwork`),
    ``FileSystem`` (:class:`SharedFileSystem`), ``LifecycleScripts``
    (:class:`LifecycleStorage`: the scripts bucket, the upload function's log group and
    security group), with ``home_file_system`` configured ``HomeFileSystem``
    (:class:`HomeFileSystem`), with ``slurm_accounting`` ``Accounting``
    (:class:`SlurmAccountingDatabase`, in the network's database subnets).

    Deleting this stack retains the file systems, buckets (with their policies), keys, log
    groups and the accounting database with its secret, and with them what they need to
    exist: the VPC, the private subnet (and the database subnets), the cluster security
    group and its rules, the database's security group and subnet group. Everything else
    (NAT gateway, public subnet, routes, endpoint, flow log, the rotation schedule) is
    deleted.

    With ``notifications`` (by default: a topic without subscribers), the training
    deployment's notification topic (``Notifications``, kept here as it outlives the
    cluster) and the file system's free-capacity alarm (``FileSystemAlarm``, as
    ``config.fsx_free_capacity_percent`` says, when the capacity is known at synth).

    Attributes: ``config``, ``network``, ``file_system``, ``lifecycle`` (the storage),
    ``home_file_system`` and ``accounting`` (None unless configured), ``notifications`` and
    ``file_system_alarm`` (None when not made), ``control_plane_subnets`` (with
    ``orchestrator: eks``: the private subnet and the network's two isolated subnets, for
    the EKS control plane; else None).
    Outputs: FileSystemId, FsxDnsName, FsxMountName, LifecycleBucketName, VpcId;
    HomeFileSystemId with a home file system; AccountingDatabaseEndpoint and
    AccountingDatabaseSecretArn with accounting; NotificationTopicArn with a topic.
    """

    @property
    def availability_zones(self) -> list[str]:
        """The zones an environment-agnostic stack has (``Fn::GetAZs``), also in a stack
        bound to an account and region (an environment's stage): the network places its
        subnets by AZ ID, so the VPC needs no zone names, and synth no availability-zones
        lookup (no credentials)."""
        return [Fn.select(0, Fn.get_azs()), Fn.select(1, Fn.get_azs())]

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TrainingConfig,
        notifications: NotificationTopicOptions | None = NotificationTopicOptions(),  # noqa: B008
        **stack_kwargs: Any,
    ) -> None:
        """Build the network, file system and lifecycle storage from ``config``."""
        super().__init__(scope, construct_id, **stack_kwargs)
        self.config = config
        self.network = ClusterNetwork(
            self,
            "Network",
            ClusterNetworkProps(**options_values(ClusterNetworkOptions, config)),
        )
        self.file_system = SharedFileSystem(
            self,
            "FileSystem",
            SharedFileSystemProps(
                **options_values(SharedFileSystemOptions, config),
                vpc=self.network.vpc,
                subnet=self.network.subnet,
                security_group=self.network.security_group,
            ),
        )
        self.lifecycle = LifecycleStorage(self, "LifecycleScripts", vpc=self.network.vpc)
        self.home_file_system: HomeFileSystem | None = None
        if config.home_file_system is not None:
            self.home_file_system = HomeFileSystem(
                self,
                "HomeFileSystem",
                HomeFileSystemProps(
                    **options_values(HomeFileSystemOptions, config.home_file_system),
                    subnet=self.network.subnet,
                    security_group=self.network.security_group,
                ),
            )
        self.accounting: SlurmAccountingDatabase | None = None
        if config.slurm_accounting:
            self.accounting = _accounting_database(self, self.network)
        # An EKS control plane needs subnets in two Availability Zones: the private subnet
        # and the network's two isolated subnets (in the Region's first two AZs).
        self.control_plane_subnets: list[ec2.ISubnet] | None = (
            self.network.database_subnets() if config.uses_eks else None
        )
        _retain_the_file_systems_network(self.network)
        self.notifications = notification_topic(self, notifications, "training alarms and events")
        self.file_system_alarm = self._file_system_alarm()
        outputs = {
            "FileSystemId": (self.file_system.file_system_id, "FSx for Lustre file system ID"),
            "FsxDnsName": (self.file_system.dns_name, "FSx for Lustre DNS name"),
            "FsxMountName": (self.file_system.mount_name, "FSx for Lustre mount name"),
            "LifecycleBucketName": (self.lifecycle.bucket.bucket_name, "Lifecycle scripts bucket"),
            "VpcId": (self.network.vpc.vpc_id, "VPC of the cluster and its file system"),
        }
        if self.home_file_system is not None:
            outputs["HomeFileSystemId"] = (
                self.home_file_system.file_system_id,
                "FSx for OpenZFS home file system ID",
            )
        if self.accounting is not None:
            outputs["AccountingDatabaseEndpoint"] = (
                self.accounting.endpoint,
                "Slurm accounting database (Aurora MySQL) endpoint",
            )
            outputs["AccountingDatabaseSecretArn"] = (
                self.accounting.secret_arn,
                "Secrets Manager secret with the accounting database's user name and password",
            )
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)

    def _file_system_alarm(self) -> FileSystemCapacityAlarm | None:
        """The file-system alarm (``FileSystemAlarm``) when there is a topic, the
        configuration asks for one and the storage capacity is known at synth."""
        percent = self.config.fsx_free_capacity_percent
        capacity = known(self.config.storage_capacity_gib)
        if self.notifications is None or percent is None or not isinstance(capacity, int):
            return None
        return FileSystemCapacityAlarm(
            self,
            "FileSystemAlarm",
            file_system_id=self.file_system.file_system_id,
            capacity_gib=capacity,
            percent=percent,
            topic_arn=self.notifications.topic_arn,
        )


def _accounting_database(scope: Construct, network: ClusterNetwork) -> SlurmAccountingDatabase:
    """The accounting database in the network's database subnets, its writer in the
    cluster's AZ, its security group retained with it (the database keeps its interfaces
    there)."""
    private = cast(ec2.CfnSubnet, network.subnet.node.default_child)
    database = SlurmAccountingDatabase(
        scope,
        "Accounting",
        SlurmAccountingDatabaseProps(
            vpc=network.vpc,
            subnets=network.database_subnets(),
            availability_zone=private.attr_availability_zone,
            cluster_security_group=network.security_group,
        ),
    )
    group = database.security_group.node.default_child
    if isinstance(group, CfnResource):
        group.apply_removal_policy(RemovalPolicy.RETAIN)
    return database


def _retain_the_file_systems_network(network: ClusterNetwork) -> None:
    """Retain the VPC, subnet, security group and group rules the retained file system
    depends on: a retained file system keeps its network interfaces in them, so deleting
    them would fail (DependencyViolation) and leave the stack in DELETE_FAILED."""
    group = network.security_group
    resources = [network.vpc.node.default_child, network.subnet.node.default_child]
    resources += [group.node.default_child]
    resources += [
        rule
        for rule in group.node.children
        if isinstance(rule, ec2.CfnSecurityGroupIngress | ec2.CfnSecurityGroupEgress)
    ]
    for resource in resources:
        if isinstance(resource, CfnResource):
            resource.apply_removal_policy(RemovalPolicy.RETAIN)


def companion_data_stack(
    scope: Construct,
    construct_id: str,
    config: TrainingConfig,
    notifications: NotificationTopicOptions | None,
    stack_kwargs: dict[str, Any],
    description: str,
) -> TrainingDataStack:
    """The data stack a training stack creates when given none: ``<construct_id>Data``
    with the training stack's environment and synthesizer, its own name
    (``<stack name>Data``) and ``description``."""
    kwargs = {k: v for k, v in stack_kwargs.items() if k not in ("description", "stack_name")}
    if stack_kwargs.get("stack_name"):
        kwargs["stack_name"] = f"{stack_kwargs['stack_name']}Data"
    return TrainingDataStack(
        scope,
        f"{construct_id}Data",
        config=config,
        notifications=notifications,
        description=description,
        **kwargs,
    )
