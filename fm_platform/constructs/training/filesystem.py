"""The shared file system of the training cluster: FSx for Lustre (PERSISTENT_2), optionally
linked to an S3 bucket for datasets in and checkpoints out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

from aws_cdk import Annotations, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_fsx as fsx
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from fm_platform.core.encryption import customer_managed_key
from fm_platform.core.options import Props, checked
from fm_platform.core.tokens import is_unresolved
from fm_platform.rules.filesystem import (
    PERSISTENT_2_SMALL_CAPACITIES_GIB,
    PERSISTENT_2_THROUGHPUT_MBPS_PER_TIB,
    check_absolute_path,
    check_data_repository,
    check_storage_capacity,
    check_throughput,
)
from fm_platform.rules.problems import Problems

# Lustre network ports: TCP 988 and 1018-1023 (Amazon FSx for Lustre User Guide, "File
# system access control with Amazon VPC"). aws-cdk-lib's LustreFileSystem opens them as one
# self-referencing rule, TCP 988-1023.
LUSTRE_L2_PORT_RANGE = (988, 1023)


@dataclass(frozen=True, kw_only=True)
class DataRepositoryAssociationProps:
    """Link a directory of the file system to an S3 prefix (datasets in, checkpoints out).

    bucket: the S3 bucket, in the file system's Region (a bucket in another account also
        needs a bucket policy for FSx's S3-access service-linked role, not added here). If
        it is encrypted with a KMS key defined in this app, the key policy is extended so
        that the FSx service-linked role may use the key through S3; for an imported key,
        add that statement yourself (a synth warning says so).
    bucket_prefix: the prefix linked, e.g. ``"datasets/"``; by default the whole bucket.
    file_system_path: the directory on the file system, by default ``/s3``.
    auto_import_events: S3 changes copied into the file system's metadata; by default new,
        changed and deleted objects.
    auto_export_events: file-system changes written back to S3; by default new, changed
        and deleted files.
    import_metadata_on_create: by default the bucket's existing objects are listed on the
        file system as soon as the association is created.
    """

    bucket: s3.IBucket
    bucket_prefix: str = ""
    file_system_path: str = "/s3"
    auto_import_events: tuple[str, ...] = ("NEW", "CHANGED", "DELETED")
    auto_export_events: tuple[str, ...] = ("NEW", "CHANGED", "DELETED")
    import_metadata_on_create: bool = True

    @property
    def data_repository_path(self) -> str:
        """The ``s3://bucket/prefix`` the association links."""
        path = f"s3://{self.bucket.bucket_name}"
        return f"{path}/{self.bucket_prefix}" if self.bucket_prefix else path

    def check(self, problems: Problems) -> None:
        """Add this association's problems to ``problems`` (under ``data_repository.``)."""
        check_data_repository(
            problems,
            "data_repository",
            file_system_path=self.file_system_path,
            bucket_prefix=self.bucket_prefix,
            auto_import_events=self.auto_import_events,
            auto_export_events=self.auto_export_events,
        )


@dataclass(frozen=True, kw_only=True)
class SharedFileSystemOptions:
    """Plain options of :class:`SharedFileSystem` (the configuration's ``training`` keys
    too).

    storage_capacity_gib: by default 1200; PERSISTENT_2 allows 1200, 2400 or a multiple
        of 2400.
    per_unit_storage_throughput_mbps: MB/s per TiB of storage; by default 250; one of
        125, 250, 500, 1000.
    mount_path: where nodes mount the file system, by default ``/fsx``.
    removal_policy: what stack deletion does to the file system; by default RETAIN.
    """

    storage_capacity_gib: int = 1200
    per_unit_storage_throughput_mbps: int = 250
    mount_path: str = "/fsx"
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN

    def check(self, problems: Problems) -> None:
        """Record every problem of these options in ``problems``."""
        check_storage_capacity(problems, "storage_capacity_gib", self.storage_capacity_gib)
        check_throughput(
            problems, "per_unit_storage_throughput_mbps", self.per_unit_storage_throughput_mbps
        )
        check_absolute_path(problems, "mount_path", self.mount_path, "/fsx")


@dataclass(frozen=True, kw_only=True)
class SharedFileSystemProps(SharedFileSystemOptions, Props):
    """Options for :class:`SharedFileSystem`: the fields of :class:`SharedFileSystemOptions`,
    and

    vpc, subnet: where the file system lives (the cluster's private subnet).
    security_group: the cluster security group; the file system joins it. Unless the group
        admits all traffic from itself, TCP 988-1023 (Lustre) is opened within it. The file
        system is created after every rule the group has when it is built.
    encryption_key: KMS key for data at rest; by default a customer-managed key with
        rotation is created and retained.
    data_repository: an S3 link for datasets and checkpoints; by default none.
    """

    vpc: ec2.IVpc
    subnet: ec2.ISubnet
    security_group: ec2.ISecurityGroup
    encryption_key: kms.IKey | None = None
    data_repository: DataRepositoryAssociationProps | None = None

    def _check(self, problems: Problems) -> None:
        props = checked(problems, self)
        props.check(problems)
        if props.data_repository is not None:
            props.data_repository.check(problems)


class SharedFileSystem(Construct):
    """An FSx for Lustre file system shared by every cluster node.

    PERSISTENT_2 SSD, LZ4 compression, Lustre 2.15, encrypted with a customer-managed key,
    retained on stack deletion (file system and key). Lustre's ports are opened only within
    the cluster security group, and the file system waits for that group's rules (FSx
    rejects a group whose rules are not in place yet).

    Attributes: ``file_system``, ``file_system_id``, ``dns_name``, ``mount_name``,
    ``mount_path``, ``encryption_key`` and ``data_repository_association`` (None without a
    data repository). Construct IDs ``FileSystem`` and ``Key`` are stable: renaming them
    replaces the file system or key.
    """

    def __init__(self, scope: Construct, construct_id: str, props: SharedFileSystemProps) -> None:
        """Create the file system under ``scope``; ``props`` is validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.encryption_key: kms.IKey = props.encryption_key or customer_managed_key(
            self, "Key", purpose="FSx for Lustre shared file system"
        )
        # aws-cdk-lib's checks of storage capacity and throughput do arithmetic on the
        # values and fail on tokens: give the L2 valid placeholders and set the tokens on
        # the CloudFormation resource (validate() above skipped them).
        capacity = props.storage_capacity_gib
        throughput = props.per_unit_storage_throughput_mbps
        self.file_system = fsx.LustreFileSystem(
            self,
            "FileSystem",
            vpc=props.vpc,
            vpc_subnet=props.subnet,
            security_group=props.security_group,
            storage_capacity_gib=(
                PERSISTENT_2_SMALL_CAPACITIES_GIB[0] if is_unresolved(capacity) else capacity
            ),
            kms_key=self.encryption_key,
            file_system_type_version=fsx.FileSystemTypeVersion.V_2_15,
            lustre_configuration=fsx.LustreConfiguration(
                deployment_type=fsx.LustreDeploymentType.PERSISTENT_2,
                per_unit_storage_throughput=(
                    PERSISTENT_2_THROUGHPUT_MBPS_PER_TIB[0]
                    if is_unresolved(throughput)
                    else throughput
                ),
                data_compression_type=fsx.LustreDataCompressionType.LZ4,
            ),
            removal_policy=props.removal_policy,
        )
        cfn_file_system = cast(fsx.CfnFileSystem, self.file_system.node.default_child)
        if is_unresolved(capacity):
            cfn_file_system.storage_capacity = capacity
        if is_unresolved(throughput):
            cfn_file_system.add_property_override(
                "LustreConfiguration.PerUnitStorageThroughput", throughput
            )
        _settle_security_group_rules(props.security_group, cfn_file_system)
        self.file_system_id: str = self.file_system.file_system_id
        self.dns_name: str = self.file_system.dns_name
        self.mount_name: str = self.file_system.mount_name
        self.mount_path: str = props.mount_path
        self.data_repository_association: fsx.CfnDataRepositoryAssociation | None = None
        if props.data_repository is not None:
            self.data_repository_association = self._associate(props.data_repository)

    def _associate(
        self, repository: DataRepositoryAssociationProps
    ) -> fsx.CfnDataRepositoryAssociation:
        association = fsx.CfnDataRepositoryAssociation(
            self,
            "DataRepositoryAssociation",
            file_system_id=self.file_system_id,
            file_system_path=repository.file_system_path,
            data_repository_path=repository.data_repository_path,
            batch_import_meta_data_on_create=repository.import_metadata_on_create,
            s3=fsx.CfnDataRepositoryAssociation.S3Property(
                auto_import_policy=_event_policy(
                    fsx.CfnDataRepositoryAssociation.AutoImportPolicyProperty,
                    repository.auto_import_events,
                ),
                auto_export_policy=_event_policy(
                    fsx.CfnDataRepositoryAssociation.AutoExportPolicyProperty,
                    repository.auto_export_events,
                ),
            ),
        )
        self._allow_fsx_to_use_bucket_key(repository.bucket)
        return association

    def _allow_fsx_to_use_bucket_key(self, bucket: s3.IBucket) -> None:
        """Let FSx's S3-access service-linked roles use the bucket's KMS key through S3 (FSx
        for Lustre User Guide, "Working with server-side encrypted Amazon S3 buckets").

        The role is named in a condition, so the key policy does not need the role to exist
        yet. The guide also narrows by the bucket ARN in the encryption context; that would
        make the key depend on its own bucket (a cycle), so the statement is scoped to this
        account, S3 in this Region and FSx's S3-access roles instead."""
        key = bucket.encryption_key
        if key is None:
            return
        stack = Stack.of(self)
        role_arn = stack.format_arn(
            service="iam",
            region="",
            resource="role",
            resource_name="aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/"
            "AWSServiceRoleForFSxS3Access_*",
        )
        added = key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="AllowFsxLustreThroughS3",
                actions=[
                    "kms:Encrypt",
                    "kms:Decrypt",
                    "kms:ReEncrypt*",
                    "kms:GenerateDataKey*",
                    "kms:DescribeKey",
                ],
                principals=[iam.AnyPrincipal()],
                resources=["*"],
                conditions={
                    "ArnLike": {"aws:PrincipalArn": role_arn},
                    "StringEquals": {
                        "kms:CallerAccount": stack.account,
                        "kms:ViaService": f"s3.{stack.region}.amazonaws.com",
                    },
                },
            )
        )
        if not added.statement_added:
            Annotations.of(self).add_warning_v2(
                "fm_platform:fsx-bucket-key",
                "The data repository bucket's KMS key is imported, so its key policy was not "
                "changed: allow the FSx service-linked role AWSServiceRoleForFSxS3Access_* "
                "to use it through S3, or auto import/export will fail.",
            )


def _settle_security_group_rules(group: ec2.ISecurityGroup, file_system: fsx.CfnFileSystem) -> None:
    """Keep one Lustre rule in ``group`` and create the file system after every rule.

    The L2 file system opens TCP 988-1023 within its group; that rule is dropped when the
    group already admits all traffic from itself (as the cluster network's group does), and
    kept for a group that may not (brought by the caller). FSx checks the group's rules when
    it creates the file system and fails with ``InvalidNetworkSettings`` if one is missing;
    separate rule resources are otherwise created in parallel with it (AWS ParallelCluster
    issue #6181), so the file system depends on each rule the group has at this point.
    """
    rules = [
        child
        for child in group.node.children
        if isinstance(child, ec2.CfnSecurityGroupIngress | ec2.CfnSecurityGroupEgress)
    ]
    admits_itself = any(
        isinstance(rule, ec2.CfnSecurityGroupIngress)
        and rule.ip_protocol == "-1"
        and rule.source_security_group_id == group.security_group_id
        for rule in rules
    )
    lustre_rule = next(
        (
            rule
            for rule in rules
            if isinstance(rule, ec2.CfnSecurityGroupIngress)
            and rule.ip_protocol == "tcp"
            and (rule.from_port, rule.to_port) == LUSTRE_L2_PORT_RANGE
            and rule.source_security_group_id == group.security_group_id
        ),
        None,
    )
    if admits_itself and lustre_rule is not None:
        group.node.try_remove_child(lustre_rule.node.id)
        rules.remove(lustre_rule)
    for rule in rules:
        file_system.node.add_dependency(rule)


_Policy = TypeVar("_Policy")


def _event_policy(kind: Callable[..., _Policy], events: tuple[str, ...]) -> _Policy | None:
    """An auto import/export policy for ``events``, or None (no policy) when empty."""
    return kind(events=list(events)) if events else None


__all__ = [
    "DataRepositoryAssociationProps",
    "SharedFileSystem",
    "SharedFileSystemOptions",
    "SharedFileSystemProps",
]
