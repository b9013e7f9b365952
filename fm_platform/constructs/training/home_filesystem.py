"""An optional home file system for the cluster's users: FSx for OpenZFS, which HyperPod
mounts on every node in managed Slurm mode (``FsxOpenZfsConfig``; SageMaker developer guide,
"SageMaker HyperPod references" -> "SageMaker HyperPod Slurm configuration": FSx for
OpenZFS is supported with the API-driven configuration, not with provisioning_parameters)."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_fsx as fsx
from aws_cdk import aws_kms as kms
from constructs import Construct

from fm_platform.core.encryption import customer_managed_key
from fm_platform.core.options import Props
from fm_platform.core.tokens import is_unresolved
from fm_platform.rules.home_filesystem import check_home_file_system
from fm_platform.rules.problems import Problems

#: NFS export options of the root volume: read-write, child volumes reachable, and root on
#: the nodes acting as root (the lifecycle scripts create the users' homes and keys).
EXPORT_OPTIONS = ("rw", "crossmnt", "no_root_squash")
BACKUP_RETENTION_DAYS = 7


@dataclass(frozen=True, kw_only=True)
class HomeFileSystemOptions:
    """Plain options of :class:`HomeFileSystem` (the configuration's
    ``training.home_file_system``).

    storage_capacity_gib: SSD storage, 64 GiB to 512 TiB; by default 64.
    throughput_capacity_mbps: 64, 128, 256, 512, 1024, 2048, 3072 or 4096 MB/s; by
        default 64.
    mount_path: where HyperPod mounts it on every node; by default ``/home`` (the API's
        default for ``FsxOpenZfsConfig``): it then holds the nodes' home directories,
        the shared users' homes among them.
    """

    storage_capacity_gib: int = 64
    throughput_capacity_mbps: int = 64
    mount_path: str = "/home"

    def check(self, problems: Problems, prefix: str = "") -> None:
        """Record every problem of these options in ``problems``, each field named after
        ``prefix``."""
        check_home_file_system(
            problems,
            prefix,
            storage_capacity_gib=self.storage_capacity_gib,
            throughput_capacity_mbps=self.throughput_capacity_mbps,
            mount_path=self.mount_path,
        )


@dataclass(frozen=True, kw_only=True)
class HomeFileSystemProps(HomeFileSystemOptions, Props):
    """Options for :class:`HomeFileSystem`: the fields of :class:`HomeFileSystemOptions`,
    and

    subnet: the cluster's private subnet (Single-AZ file system in the cluster's AZ).
    security_group: the cluster's security group; the file system joins it (NFS travels
        within the group) and is created after every rule the group has when it is built.
    encryption_key: KMS key for data at rest; by default a customer-managed key with
        rotation is created and retained.
    """

    subnet: ec2.ISubnet
    security_group: ec2.ISecurityGroup
    encryption_key: kms.IKey | None = None


class HomeFileSystem(Construct):
    """An FSx for OpenZFS file system (Single-AZ 1, SSD, LZ4) in the cluster's subnet,
    exported to that subnet, encrypted with a customer-managed key, backed up daily (kept 7
    days) and retained on stack deletion with its key.

    Attributes: ``file_system`` (the CfnFileSystem), ``file_system_id``, ``dns_name``,
    ``mount_path``, ``encryption_key``. Construct IDs ``FileSystem`` and ``Key`` are stable.
    """

    def __init__(self, scope: Construct, construct_id: str, props: HomeFileSystemProps) -> None:
        """Create the file system under ``scope``; ``props`` is validated first."""
        super().__init__(scope, construct_id)
        props.validate()
        self.encryption_key: kms.IKey = props.encryption_key or customer_managed_key(
            self, "Key", purpose="FSx for OpenZFS home file system"
        )
        clients = _subnet_cidr(props.subnet) or "*"
        zfs = fsx.CfnFileSystem
        self.file_system = zfs(
            self,
            "FileSystem",
            file_system_type="OPENZFS",
            storage_type="SSD",
            storage_capacity=props.storage_capacity_gib,
            subnet_ids=[props.subnet.subnet_id],
            security_group_ids=[props.security_group.security_group_id],
            kms_key_id=self.encryption_key.key_id,
            open_zfs_configuration=zfs.OpenZFSConfigurationProperty(
                deployment_type="SINGLE_AZ_1",
                throughput_capacity=props.throughput_capacity_mbps,
                automatic_backup_retention_days=BACKUP_RETENTION_DAYS,
                copy_tags_to_backups=True,
                copy_tags_to_volumes=True,
                root_volume_configuration=zfs.RootVolumeConfigurationProperty(
                    data_compression_type="LZ4",
                    nfs_exports=[
                        zfs.NfsExportsProperty(
                            client_configurations=[
                                zfs.ClientConfigurationsProperty(
                                    clients=clients,
                                    options=list(EXPORT_OPTIONS),
                                )
                            ]
                        )
                    ],
                ),
            ),
        )
        self.file_system.apply_removal_policy(RemovalPolicy.RETAIN)
        # FSx checks the group's rules when it creates the file system.
        for rule in props.security_group.node.children:
            if isinstance(rule, ec2.CfnSecurityGroupIngress | ec2.CfnSecurityGroupEgress):
                self.file_system.node.add_dependency(rule)
        self.file_system_id: str = self.file_system.ref
        self.dns_name: str = self.file_system.attr_dns_name
        self.mount_path: str = props.mount_path


def _subnet_cidr(subnet: ec2.ISubnet) -> str | None:
    """The subnet's CIDR when known at synth time (the NFS export's clients), else None:
    the security group alone then limits who mounts it."""
    try:
        cidr = subnet.ipv4_cidr_block
    except Exception:  # noqa: BLE001 - imported subnets without a CIDR raise on access
        return None
    return None if not cidr or is_unresolved(cidr) else cidr
