"""The training cluster's stateful half: what must outlive the cluster (the FSx for Lustre
file system, the lifecycle-script bucket, keys and logs) and the network they live in."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, CfnResource, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from fm_platform.config.training import TrainingConfig
from fm_platform.constructs.observability.topic import NotificationTopicOptions
from fm_platform.constructs.options import options_values
from fm_platform.constructs.training.filesystem import (
    SharedFileSystem,
    SharedFileSystemOptions,
    SharedFileSystemProps,
)
from fm_platform.constructs.training.lifecycle import LifecycleStorage
from fm_platform.constructs.training.network import (
    ClusterNetwork,
    ClusterNetworkOptions,
    ClusterNetworkProps,
)
from fm_platform.stacks.observability import file_system_alarm, notification_topic


class TrainingDataStack(Stack):
    """The network, file system and lifecycle storage of a training cluster, kept apart from
    the cluster (:class:`~fm_platform.stacks.training.TrainingStack`) so that deleting the
    cluster's stack never touches them and the cluster can be recreated on its own.

    Composition (construct IDs are stable): ``Network`` (:class:`ClusterNetwork`),
    ``FileSystem`` (:class:`SharedFileSystem`), ``LifecycleScripts``
    (:class:`LifecycleStorage`: the scripts bucket, the upload function's log group and
    security group).

    Deleting this stack retains the file system, buckets (with their policies), keys and log
    groups, and with them what the file system needs to exist: the VPC, the private subnet,
    the cluster security group and its rules. Everything else (NAT gateway, public subnet,
    routes, endpoint, flow log) is deleted.

    With ``notifications`` (by default: a topic without subscribers), the training
    deployment's notification topic (``Notifications``, kept here as it outlives the
    cluster) and the file system's free-capacity alarm (``FileSystemAlarm``, as
    ``config.fsx_free_capacity_percent`` says); see :mod:`fm_platform.stacks.observability`.

    Attributes: ``config``, ``network``, ``file_system``, ``lifecycle`` (the storage),
    ``notifications`` and ``file_system_alarm`` (None when not made).
    Outputs: FileSystemId, LifecycleBucketName, VpcId, and NotificationTopicArn with a topic.
    """

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
        _retain_the_file_systems_network(self.network)
        self.notifications = notification_topic(self, notifications, "training alarms and events")
        self.file_system_alarm = file_system_alarm(self, self.notifications)
        outputs = {
            "FileSystemId": (self.file_system.file_system_id, "FSx for Lustre file system ID"),
            "LifecycleBucketName": (self.lifecycle.bucket.bucket_name, "Lifecycle scripts bucket"),
            "VpcId": (self.network.vpc.vpc_id, "VPC of the cluster and its file system"),
        }
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)


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
