"""The CloudFormation properties of a HyperPod cluster's instance groups and orchestrator,
in lifecycle or managed Slurm mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import aws_sagemaker as sagemaker

from fm_platform.constructs.training.instance_groups import (
    Capacity,
    InstanceGroup,
    NodeRole,
    ScheduledUpdate,
)
from fm_platform.rules.instance_groups import CAPACITY_MEMBERS

_Cfn = sagemaker.CfnCluster


@dataclass(frozen=True, kw_only=True)
class LustreMount:
    """Where HyperPod mounts FSx for Lustre in managed mode (``FsxLustreConfig``)."""

    dns_name: str
    mount_name: str
    mount_path: str


@dataclass(frozen=True, kw_only=True)
class OpenZfsMount:
    """Where HyperPod mounts FSx for OpenZFS in managed mode (``FsxOpenZfsConfig``)."""

    dns_name: str
    mount_path: str


@dataclass(frozen=True, kw_only=True)
class GroupContext:
    """What every group of one cluster shares: its role, its lifecycle scripts, the Slurm
    mode, the mounts HyperPod makes in managed mode, and the alarms that roll a scheduled
    update back besides each group's own."""

    execution_role_arn: str
    source_s3_uri: str
    script: str
    managed: bool
    lustre: LustreMount | None = None
    home: OpenZfsMount | None = None
    rollback_alarms: Sequence[str] = ()


def group_property(
    group: InstanceGroup, context: GroupContext
) -> _Cfn.ClusterInstanceGroupProperty:
    """One ``ClusterInstanceGroup``. Lifecycle mode: the scripts run as ``OnCreate`` and set
    Slurm up. Managed mode: they run as ``OnInitComplete`` (after HyperPod's own
    initialization, which configures Slurm from ``SlurmConfig`` and mounts the file systems
    of ``InstanceStorageConfigs``)."""
    # OnInitComplete is the "Extended mode: runs after HyperPod configures the default
    # software" entry point and OnCreate the "Customer Managed" one, mutually exclusive
    # (AWS::SageMaker::Cluster schema, ClusterLifeCycleConfig); AWS's managed-Slurm example
    # (awslabs/awsome-distributed-training, Extensions/observability) uses OnInitComplete.
    life_cycle = _Cfn.ClusterLifeCycleConfigProperty(
        source_s3_uri=context.source_s3_uri,
        on_create=None if context.managed else context.script,
        on_init_complete=context.script if context.managed else None,
    )
    return _Cfn.ClusterInstanceGroupProperty(
        instance_group_name=group.name,
        instance_type=group.instance_type,
        instance_count=group.instance_count,
        min_instance_count=group.min_count,
        execution_role=context.execution_role_arn,
        threads_per_core=group.threads_per_core,
        life_cycle_config=life_cycle,
        instance_storage_configs=_storage(group, context) or None,
        on_start_deep_health_checks=list(group.effective_deep_health_checks) or None,
        training_plan_arn=group.training_plan_arn,
        slurm_config=_slurm_config(group) if context.managed else None,
        capacity_requirements=_capacity(group.capacity),
        image_id=group.image_id,
        scheduled_update_config=(
            _scheduled_update(group.scheduled_update, context.rollback_alarms)
            if group.scheduled_update is not None
            else None
        ),
    )


def orchestrator(
    *,
    strategy: str | None,
    accounting: _Cfn.ClusterAccountingDatabaseProperty | None,
) -> _Cfn.OrchestratorProperty:
    """``Orchestrator.Slurm`` of managed mode: the configuration strategy (none with
    continuous provisioning) and the external accounting database, if any."""
    return _Cfn.OrchestratorProperty(
        slurm=_Cfn.ClusterOrchestratorSlurmConfigProperty(
            slurm_config_strategy=strategy, accounting_database=accounting
        )
    )


def _storage(
    group: InstanceGroup, context: GroupContext
) -> list[_Cfn.ClusterInstanceStorageConfigProperty]:
    storage = []
    if group.ebs_volume_gib is not None:
        storage.append(
            _Cfn.ClusterInstanceStorageConfigProperty(
                ebs_volume_config=_Cfn.ClusterEbsVolumeConfigProperty(
                    volume_size_in_gb=group.ebs_volume_gib
                )
            )
        )
    if context.managed and context.lustre is not None:
        lustre = context.lustre
        storage.append(
            _Cfn.ClusterInstanceStorageConfigProperty(
                fsx_lustre_config=_Cfn.ClusterFsxLustreConfigProperty(
                    dns_name=lustre.dns_name,
                    mount_name=lustre.mount_name,
                    mount_path=lustre.mount_path,
                )
            )
        )
    if context.managed and context.home is not None:
        storage.append(
            _Cfn.ClusterInstanceStorageConfigProperty(
                fsx_open_zfs_config=_Cfn.ClusterFsxOpenZfsConfigProperty(
                    dns_name=context.home.dns_name, mount_path=context.home.mount_path
                )
            )
        )
    return storage


def _slurm_config(group: InstanceGroup) -> _Cfn.ClusterSlurmConfigProperty:
    partition = group.slurm_partition
    return _Cfn.ClusterSlurmConfigProperty(
        node_type=group.role.slurm_node_type,
        partition_names=[partition] if group.role is NodeRole.WORKER and partition else None,
    )


def _capacity(capacity: Capacity | None) -> _Cfn.ClusterCapacityRequirementsProperty | None:
    if capacity is None:
        return None
    member = CAPACITY_MEMBERS[capacity.value]
    return _Cfn.ClusterCapacityRequirementsProperty(
        on_demand={} if member == "OnDemand" else None,
        spot={} if member == "Spot" else None,
    )


def _scheduled_update(
    update: ScheduledUpdate, construct_alarms: Sequence[str]
) -> _Cfn.ScheduledUpdateConfigProperty:
    batch = None
    if update.batch_percent is not None:
        batch = _Cfn.CapacitySizeConfigProperty(
            type="CAPACITY_PERCENTAGE", value=update.batch_percent
        )
    elif update.batch_count is not None:
        batch = _Cfn.CapacitySizeConfigProperty(type="INSTANCE_COUNT", value=update.batch_count)
    alarms = [*update.rollback_alarms, *construct_alarms]
    return _Cfn.ScheduledUpdateConfigProperty(
        schedule_expression=update.cron,
        deployment_config=_Cfn.DeploymentConfigProperty(
            rolling_update_policy=(
                _Cfn.RollingUpdatePolicyProperty(maximum_batch_size=batch) if batch else None
            ),
            wait_interval_in_seconds=update.wait_s,
            auto_rollback_configuration=[
                _Cfn.AlarmDetailsProperty(alarm_name=name) for name in alarms
            ]
            or None,
        ),
    )
