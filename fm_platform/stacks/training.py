"""The training stacks, configured by one :class:`TrainingConfig`: a HyperPod cluster with
Slurm (:class:`TrainingStack`) and what it keeps (:class:`TrainingDataStack`: network, FSx
for Lustre, lifecycle-script bucket)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aws_cdk import CfnOutput, CrossStackReferences, Fn, ReferenceStrength, Stack
from constructs import Construct

from fm_platform.constructs.training.hyperpod import HyperPodCluster, HyperPodClusterProps
from fm_platform.constructs.training.instance_groups import (
    InstanceGroup,
    NodeRole,
    provisioning_parameters,
    validate_instance_groups,
)
from fm_platform.constructs.training.lifecycle import LifecycleScripts, LifecycleScriptsProps
from fm_platform.mapping import dataclass_values, list_of
from fm_platform.stacks.training_data import TrainingDataStack
from fm_platform.validation import Problems

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
        partition_name="dev",
    ),
)


@dataclass(frozen=True, kw_only=True)
class TrainingConfig:
    """Everything a user configures in the training stack.

    availability_zone_id: AZ ID of the cluster and its file system; by default use1-az4
        (us-east-1 only: set it when deploying elsewhere).
    vpc_cidr: by default 10.0.0.0/16.
    private_subnet_cidr_mask: by default 17 (32,763 usable addresses; every EFA interface
        takes one).
    storage_capacity_gib: FSx for Lustre size; by default 1200.
    per_unit_storage_throughput_mbps: FSx throughput per TiB; by default 250.
    instance_groups: by default a controller group "controller" (one ml.m5.12xlarge) and a
        worker group "workers" (four ml.trn1.32xlarge, partition "dev").
    cluster_name: by default CloudFormation generates one.
    node_recovery: by default Automatic.
    lifecycle_assets_path: folder of lifecycle scripts; by default the package's own.
    """

    availability_zone_id: str = "use1-az4"
    vpc_cidr: str = "10.0.0.0/16"
    private_subnet_cidr_mask: int = 17
    storage_capacity_gib: int = 1200
    per_unit_storage_throughput_mbps: int = 250
    instance_groups: tuple[InstanceGroup, ...] = DEFAULT_INSTANCE_GROUPS
    cluster_name: str | None = None
    node_recovery: str = "Automatic"
    lifecycle_assets_path: str | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], into: Problems | None = None) -> TrainingConfig:
        """A config from JSON-like data (a config file or ``cdk.json`` context); keys are
        the field names, missing keys keep their defaults. ``instance_groups`` is a list of
        mappings with the :class:`InstanceGroup` field names and ``role`` one of
        ``controller``, ``login``, ``worker``. With ``into``, problems are recorded there
        and the config is built from the valid entries."""
        problems = Problems.within(into, "TrainingConfig")
        values = dataclass_values(problems, "", data, cls)
        if "instance_groups" in values:
            values["instance_groups"] = list_of(
                problems, "instance_groups", values["instance_groups"], _instance_group
            )
        problems.raise_if_any()
        return cls(**values)


def _instance_group(problems: Problems, where: str, data: Any) -> InstanceGroup | None:
    """One instance group from its mapping, ``role`` given by name."""
    roles = {role.value: role for role in NodeRole}
    values = dataclass_values(problems, where, data, InstanceGroup)
    role = values.get("role")
    if role is not None and role not in roles:
        problems.add(f"{where}role", role, "must be one of " + ", ".join(roles))
    if problems or role is None:
        return None
    values["role"] = roles[role]
    if values.get("deep_health_checks") is not None:
        values["deep_health_checks"] = tuple(values["deep_health_checks"])
    return InstanceGroup(**values)


class TrainingStack(Stack):
    """A HyperPod cluster with Slurm: the stateless half of a training deployment, which can
    be destroyed and recreated on its own.

    Its stateful half, a :class:`TrainingDataStack` (network, FSx for Lustre, lifecycle
    bucket, keys, logs), is ``data`` when given, else one is created next to this stack in
    the same scope, named ``<construct_id>Data`` (``<stack_name>Data`` when ``stack_name``
    is given), with the same environment. This stack depends on it and retains nothing.

    Composition (construct IDs are stable): ``LifecycleScripts`` (:class:`LifecycleScripts`:
    the upload of the scripts into the data stack's bucket, run in its private subnet, with
    provisioning parameters from the instance groups and the file system's DNS and mount
    names) -> ``Cluster`` (:class:`HyperPodCluster`).

    Attributes: ``config``, ``data``, ``network`` and ``file_system`` (the data stack's),
    ``provisioning_parameters`` (the provisioning_parameters.json document, with FSx
    tokens), ``lifecycle``, ``cluster``. Outputs (read by the ``fmp`` CLI): ClusterName,
    ClusterArn, ControllerGroupName, FsxDnsName, FsxMountName, FsxMountPath,
    LifecycleScriptsS3Uri, SsmLoginCommand.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: TrainingConfig = TrainingConfig(),  # noqa: B008 - frozen, so safe to share
        data: TrainingDataStack | None = None,
        **stack_kwargs: Any,
    ) -> None:
        """Build the cluster stack from ``config`` (and its data stack unless ``data`` is given);
        the instance groups are validated first."""
        super().__init__(scope, construct_id, **stack_kwargs)
        # Set here, not left to the app's @aws-cdk/core:defaultCrossStackReferences: the
        # cluster reads the data stack's values with Fn::GetStackOutput, so no export locks
        # the data stack while the cluster is destroyed, recreated or changed.
        CrossStackReferences.of(self).consume(ReferenceStrength.WEAK)
        # The groups shape everything below (provisioning parameters, the cluster): check
        # them before building anything.
        problems = Problems("TrainingConfig")
        validate_instance_groups(problems, config.instance_groups)
        problems.raise_if_any()
        self.config = config
        self.data = data or _data_stack(scope, construct_id, config, stack_kwargs)
        self.network = self.data.network
        self.file_system = self.data.file_system
        self.provisioning_parameters = provisioning_parameters(
            config.instance_groups,
            fsx_dns_name=self.file_system.dns_name,
            fsx_mount_name=self.file_system.mount_name,
            fsx_mount_path=self.file_system.mount_path,
        )
        storage = self.data.lifecycle
        self.lifecycle = LifecycleScripts(
            self,
            "LifecycleScripts",
            LifecycleScriptsProps(
                provisioning_parameters=self.provisioning_parameters,
                assets_path=config.lifecycle_assets_path,
                bucket=storage.bucket,
                upload_log_group=storage.upload_log_group,
                vpc=self.network.vpc,
                subnet=self.network.subnet,
                security_group=storage.upload_security_group,
            ),
        )
        self.cluster = HyperPodCluster(
            self,
            "Cluster",
            HyperPodClusterProps(
                instance_groups=config.instance_groups,
                subnet=self.network.subnet,
                security_group=self.network.security_group,
                lifecycle=self.lifecycle,
                file_system=self.file_system,
                cluster_name=config.cluster_name,
                node_recovery=config.node_recovery,
            ),
        )
        self._add_outputs()

    def _add_outputs(self) -> None:
        cluster = self.cluster
        outputs = {
            "ClusterName": (
                cluster.cluster_name,
                "Cluster name (or ARN when CloudFormation named it): use it with "
                "aws sagemaker describe-cluster / list-cluster-nodes --cluster-name",
            ),
            "ClusterArn": (cluster.cluster_arn, "Cluster ARN"),
            "ControllerGroupName": (
                cluster.controller_group_name,
                "Instance group of the Slurm controller (head node)",
            ),
            "FsxDnsName": (self.file_system.dns_name, "FSx for Lustre DNS name"),
            "FsxMountName": (self.file_system.mount_name, "FSx for Lustre mount name"),
            "FsxMountPath": (self.file_system.mount_path, "Where nodes mount FSx for Lustre"),
            "LifecycleScriptsS3Uri": (self.lifecycle.s3_uri, "Lifecycle scripts S3 prefix"),
            "SsmLoginCommand": (
                Fn.join(
                    "",
                    [
                        "aws ssm start-session --target sagemaker-cluster:",
                        cluster.cluster_id,
                        f"_{cluster.controller_group_name}-<instance-id>",
                    ],
                ),
                "Log in to the head node: replace <instance-id> with the controller's "
                "instance ID from `aws sagemaker list-cluster-nodes` or `fmp cluster nodes`",
            ),
        }
        for key, (value, description) in outputs.items():
            CfnOutput(self, key, value=value, description=description)


def _data_stack(
    scope: Construct, construct_id: str, config: TrainingConfig, stack_kwargs: dict[str, Any]
) -> TrainingDataStack:
    """The data stack created for a TrainingStack given none: same environment and
    synthesizer, its own name and description."""
    kwargs = {k: v for k, v in stack_kwargs.items() if k not in ("description", "stack_name")}
    if stack_kwargs.get("stack_name"):
        kwargs["stack_name"] = f"{stack_kwargs['stack_name']}Data"
    return TrainingDataStack(
        scope,
        f"{construct_id}Data",
        config=config,
        description="fm_platform: what the HyperPod training cluster keeps (network, FSx "
        "for Lustre, lifecycle-script bucket, keys, logs)",
        **kwargs,
    )
