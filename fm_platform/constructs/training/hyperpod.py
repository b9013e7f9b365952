"""A SageMaker HyperPod cluster orchestrated by Slurm (classic mode: the lifecycle scripts
read ``provisioning_parameters.json`` and start the Slurm daemons)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from aws_cdk import CfnTag, Fn
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IConstruct

from fm_platform.compliance import acknowledge_wildcard_resource
from fm_platform.constructs.options import checked
from fm_platform.constructs.tokens import is_unresolved
from fm_platform.constructs.training.cluster_role import (
    ClusterExecutionRole,
    cluster_execution_role,
    extend_given_role,
    network_interface_statements,
)
from fm_platform.constructs.training.instance_groups import (
    InstanceGroup,
    NodeRole,
    provisioning_parameters,
    validate_instance_groups,
)
from fm_platform.constructs.unknown_types import warn_unknown_accelerated_type
from fm_platform.rules.instance_groups import required_addresses
from fm_platform.rules.network import SUBNET_ADDRESS_MARGIN, check_subnet_capacity
from fm_platform.rules.problems import Problems


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
    """What the cluster needs from its shared file system (``SharedFileSystem`` fits)."""

    @property
    def file_system(self) -> IConstruct: ...


@dataclass(frozen=True, kw_only=True)
class HyperPodClusterOptions:
    """Plain options of :class:`HyperPodCluster` (the configuration's ``training`` keys
    too).

    instance_groups: the groups; exactly one CONTROLLER, at most one LOGIN, any WORKERs.
    cluster_name: by default none is set and CloudFormation generates one, so that a change
        needing replacement can proceed; a fixed name blocks replacement.
    node_recovery: ``Automatic`` (the default: HyperPod replaces faulty nodes) or ``None``.
    tags: tags on the cluster; by default none.
    """

    instance_groups: Sequence[InstanceGroup]
    cluster_name: str | None = None
    node_recovery: str = "Automatic"
    tags: Mapping[str, str] | None = None

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        validate_instance_groups(problems, self.instance_groups or ())
        problems.check_shape("cluster_name", self.cluster_name, "ClusterName")
        problems.check_shape("node_recovery", self.node_recovery, "ClusterNodeRecovery")

    @property
    def required_ipv4_addresses(self) -> int | None:
        """Subnet addresses the groups take (see :func:`required_ipv4_addresses`), None when
        a group's count is unknown."""
        return required_addresses(
            [(g.instance_type, g.instance_count) for g in self.instance_groups or () if g]
        )


@dataclass(frozen=True, kw_only=True)
class HyperPodClusterProps(HyperPodClusterOptions):
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
        role may describe it (without that, HyperPod silently skips EFA setup for FSx). By
        default no file system is wired.
    """

    subnet: ec2.ISubnet
    security_group: ec2.ISecurityGroup
    lifecycle: LifecycleSource
    execution_role: iam.IRole | None = None
    file_system: FileSystemSource | None = None

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem with these props.
        With ``into``, record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, "HyperPodClusterProps")
        props = checked(problems, self)
        props.check(problems)
        cidr = _known_cidr(self.subnet)
        check_subnet_capacity(
            problems,
            "subnet",
            cidr,
            ipaddress.IPv4Network(cidr, strict=False).prefixlen if cidr else None,
            props.required_ipv4_addresses,
        )
        problems.raise_if_any()


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


class HyperPodCluster(Construct):
    """A SageMaker HyperPod cluster with Slurm, one ``AWS::SageMaker::Cluster``.

    Every group runs the lifecycle scripts' ``on_create`` entry point from their S3 prefix;
    the scripts read ``provisioning_parameters.json`` (see :func:`provisioning_parameters`)
    to set each node up as controller, login or compute node. No per-group ``SlurmConfig``
    is set: HyperPod rejects it together with ``provisioning_parameters.json``.

    Attributes: ``cluster`` (the CfnCluster), ``cluster_arn``, ``cluster_id`` (the last part
    of the ARN, used in SSM targets), ``cluster_name`` (the given name, else the ARN, which
    every SageMaker cluster API accepts in its place: CloudFormation returns no generated
    name), ``execution_role``, ``instance_groups``, ``controller_group_name``. Construct IDs
    ``Resource`` and ``ExecutionRole`` are stable.
    """

    def __init__(self, scope: Construct, construct_id: str, props: HyperPodClusterProps) -> None:
        """Create the cluster and its execution role under ``scope``; ``props`` is validated
        first."""
        super().__init__(scope, construct_id)
        props.validate()
        for index, group in enumerate(props.instance_groups):
            warn_unknown_accelerated_type(
                self, f"instance_groups[{index}].instance_type", group.instance_type
            )
        self.instance_groups: tuple[InstanceGroup, ...] = tuple(props.instance_groups)
        self.controller_group_name: str = next(
            g.name for g in self.instance_groups if g.role is NodeRole.CONTROLLER
        )
        self.execution_role: iam.IRole = props.execution_role or cluster_execution_role(
            self, "ExecutionRole", subnet=props.subnet, security_group=props.security_group
        )
        statements = list(props.lifecycle.read_statements())
        if props.file_system is not None:
            statements.append(_describe_file_systems_statement())
        if props.execution_role is None:
            for statement in statements:
                self.execution_role.add_to_principal_policy(statement)
            _acknowledge_lifecycle_read(self.execution_role, props.lifecycle)
        else:
            network = network_interface_statements(
                self, subnet=props.subnet, security_group=props.security_group
            )
            extend_given_role(self, self.execution_role, [*network, *statements])

        self.cluster = sagemaker.CfnCluster(
            self,
            "Resource",
            cluster_name=props.cluster_name,
            node_recovery=props.node_recovery,
            instance_groups=[
                self._group_property(group, props.lifecycle) for group in self.instance_groups
            ],
            vpc_config=sagemaker.CfnCluster.VpcConfigProperty(
                subnets=[props.subnet.subnet_id],
                security_group_ids=[props.security_group.security_group_id],
            ),
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

        self.cluster_arn: str = self.cluster.attr_cluster_arn
        self.cluster_id: str = Fn.select(1, Fn.split("/", self.cluster_arn))
        self.cluster_name: str = props.cluster_name or self.cluster_arn

    def _group_property(
        self, group: InstanceGroup, lifecycle: LifecycleSource
    ) -> sagemaker.CfnCluster.ClusterInstanceGroupProperty:
        storage = None
        if group.ebs_volume_gib is not None:
            storage = [
                sagemaker.CfnCluster.ClusterInstanceStorageConfigProperty(
                    ebs_volume_config=sagemaker.CfnCluster.ClusterEbsVolumeConfigProperty(
                        volume_size_in_gb=group.ebs_volume_gib
                    )
                )
            ]
        return sagemaker.CfnCluster.ClusterInstanceGroupProperty(
            instance_group_name=group.name,
            instance_type=group.instance_type,
            instance_count=group.instance_count,
            execution_role=self.execution_role.role_arn,
            threads_per_core=group.threads_per_core,
            life_cycle_config=sagemaker.CfnCluster.ClusterLifeCycleConfigProperty(
                source_s3_uri=lifecycle.s3_uri, on_create=lifecycle.on_create_script
            ),
            instance_storage_configs=storage,
            on_start_deep_health_checks=list(group.effective_deep_health_checks) or None,
            training_plan_arn=group.training_plan_arn,
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
    "FileSystemSource",
    "HyperPodCluster",
    "HyperPodClusterOptions",
    "HyperPodClusterProps",
    "InstanceGroup",
    "LifecycleSource",
    "NodeRole",
    "SUBNET_ADDRESS_MARGIN",
    "provisioning_parameters",
    "required_ipv4_addresses",
]
