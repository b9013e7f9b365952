"""Rules of a HyperPod cluster's Slurm mode and what depends on it: the Slurm configuration
strategy, continuous node provisioning, the external accounting database, the minimum
counts of groups and the file systems HyperPod mounts itself.

Sources (SageMaker developer guide): "SageMaker HyperPod references" -> "SageMaker HyperPod
Slurm configuration" (API-driven configuration, recommended for new clusters; FSx for
Lustre and FSx for OpenZFS through ``InstanceStorageConfigs``); "Migrating to API-driven
Slurm configuration" (strategies, ``Merge`` the default); "Continuous provisioning for
enhanced cluster operations with Slurm" (needs ``SlurmConfig``, rejects any
``SlurmConfigStrategy``, runs in merge mode; ``MinInstanceCount``); "Using an external
accounting database with SageMaker HyperPod Slurm clusters" (needs continuous
provisioning). botocore: ``ClusterOrchestratorSlurmConfig.AccountingDatabase`` "is only
supported for clusters using Continuous as the NodeProvisioningMode".
"""

from __future__ import annotations

from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name

MANAGED, LIFECYCLE = "managed", "lifecycle"
SLURM_MODES = (MANAGED, LIFECYCLE)
STANDARD, CONTINUOUS = "standard", "continuous"
NODE_PROVISIONING_MODES = (STANDARD, CONTINUOUS)
#: The strategy written when none is given and the cluster provisions in standard mode:
#: ``Merge`` keeps manual ``slurm.conf`` edits (the migration guide's default and advice
#: when unsure) and is the only behaviour continuous provisioning has, so both provisioning
#: modes behave alike. It is written out because AWS's pages disagree on the default
#: (``Managed`` on the reference page, ``Merge`` in the migration guide).
DEFAULT_SLURM_CONFIG_STRATEGY = "Merge"

_NEEDS_MANAGED = (
    "needs slurm_mode managed: it belongs to HyperPod's API-driven Slurm configuration, "
    "which the legacy provisioning_parameters.json (lifecycle mode) cannot use"
)


def check_slurm_config_strategy(
    problems: Problems,
    field: str,
    strategy: str | None,
    *,
    slurm_mode: str | None,
    continuous: bool,
) -> None:
    """One of botocore's ``ClusterSlurmConfigStrategy``, only in managed mode and never
    with continuous provisioning (which rejects the field)."""
    if strategy is None:
        return
    problems.check_shape(field, strategy, "ClusterSlurmConfigStrategy")
    if slurm_mode == LIFECYCLE:
        problems.add(field, strategy, _NEEDS_MANAGED)
    elif continuous:
        problems.add(
            field,
            strategy,
            "leave it unset with continuous node provisioning: such clusters run Slurm's "
            "configuration in merge mode only and reject any SlurmConfigStrategy",
        )


def check_node_provisioning(
    problems: Problems, field: str, provisioning: str | None, *, slurm_mode: str | None
) -> None:
    """``standard`` or ``continuous``; continuous needs managed mode (it takes the Slurm
    topology from the groups' ``SlurmConfig`` only)."""
    problems.check_choice(field, provisioning, NODE_PROVISIONING_MODES)
    if provisioning == CONTINUOUS and slurm_mode == LIFECYCLE:
        problems.add(field, provisioning, _NEEDS_MANAGED)


def check_needs_continuous(
    problems: Problems,
    field: str,
    value: object,
    *,
    what: str,
    slurm_mode: str | None,
    provisioning: str | None,
) -> None:
    """``value`` (a setting that exists only with continuous provisioning, described by
    ``what``) is set: the cluster must be in managed mode and not explicitly in standard
    provisioning. Unset provisioning turns continuous for it."""
    if value is None or value is False:
        return
    if slurm_mode == LIFECYCLE:
        problems.add(field, value, f"{_NEEDS_MANAGED} ({what} needs continuous provisioning)")
    elif provisioning == STANDARD:
        problems.add(
            field,
            value,
            f"{what} needs continuous node provisioning; set node_provisioning to "
            "continuous, or leave it unset (then it is continuous)",
        )


def continuous_provisioning(
    provisioning: str | None, *, accounting: bool, min_counts: bool
) -> bool:
    """Whether the cluster provisions continuously: as asked, else when something needs it
    (an accounting database, a group's minimum count)."""
    if provisioning is not None:
        return provisioning == CONTINUOUS
    return accounting or min_counts


def check_needs_managed(
    problems: Problems, field: str, value: object, *, slurm_mode: str | None
) -> None:
    """``value`` (a setting of the API-driven Slurm configuration) is set only in managed
    mode."""
    if value is not None and value is not False and slurm_mode == LIFECYCLE:
        problems.add(field, value, _NEEDS_MANAGED)


def check_managed_mount_path(problems: Problems, field: str, path: str | None) -> None:
    """A mount path HyperPod accepts in ``FsxLustreConfig``/``FsxOpenZfsConfig`` (botocore's
    ``ClusterFsxMountPath``; the CloudFormation schema also refuses a trailing or double
    slash)."""
    if path is None:
        return
    problems.check_shape(field, path, member_shape_name("ClusterFsxLustreConfig", "MountPath"))
    if path.endswith("/") or "//" in path:
        problems.add(field, path, "must not end with '/' or hold '//' (e.g. /fsx)")
