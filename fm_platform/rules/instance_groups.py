"""Rules of HyperPod instance groups: names, types, counts, Slurm roles and partitions,
deep health checks, minimum counts, capacity types, image pins, and the addresses the
groups take in their subnet."""

from __future__ import annotations

from collections.abc import Sequence

from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.rules.network import SUBNET_ADDRESS_MARGIN
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule

CONTROLLER, LOGIN, WORKER = "controller", "login", "worker"

#: The ``SlurmConfig.NodeType`` of each role in managed Slurm mode (botocore enum
#: ``ClusterSlurmNodeType``).
SLURM_NODE_TYPES = {CONTROLLER: "Controller", LOGIN: "Login", WORKER: "Compute"}

ON_DEMAND, SPOT = "on_demand", "spot"
#: The capacity types a group may ask for, and the ``ClusterCapacityRequirements`` member
#: each one sets.
CAPACITY_MEMBERS = {ON_DEMAND: "OnDemand", SPOT: "Spot"}
#: Why ``spot`` is refused: AWS documents Spot capacity only for EKS-orchestrated clusters.
SPOT_UNSUPPORTED = (
    "HyperPod documents Spot capacity only for clusters orchestrated by Amazon EKS, with "
    'continuous provisioning or Karpenter autoscaling (SageMaker developer guide, "Spot '
    'instances in Amazon SageMaker HyperPod"); nothing documents it for Slurm clusters, so '
    "use on_demand (or leave capacity unset)"
)

#: Accelerators HyperPod's deep health checks test (NVIDIA GPU and Trainium instances; the
#: HyperPod developer guide, "Deep health checks", lists no check for other families).
DEEP_HEALTH_CHECK_ACCELERATORS = frozenset({"nvidia-gpu", "trainium"})

_SPEC = "ClusterInstanceGroupSpecification"


def supports_deep_health_checks(instance_type: str | None) -> bool:
    """Whether HyperPod's deep health checks run on ``instance_type``."""
    if instance_type is None:
        return False
    try:
        return instance_spec(instance_type).accelerator in DEEP_HEALTH_CHECK_ACCELERATORS
    except UnknownInstanceTypeError:
        return False


def addresses_per_instance(instance_type: str | None) -> int:
    """Subnet addresses one instance takes: one per EFA interface, at least one. Types
    missing from the instance data count as one."""
    if instance_type is None:
        return 1
    try:
        return max(1, instance_spec(instance_type).efa_interfaces)
    except UnknownInstanceTypeError:
        return 1


def required_addresses(groups: Sequence[tuple[str | None, int | None]]) -> int | None:
    """Subnet addresses of groups given as ``(instance_type, instance_count)``: for each
    instance, one per EFA interface (at least one), plus :data:`SUBNET_ADDRESS_MARGIN`;
    None when a count is unknown."""
    total = 0
    for instance_type, count in groups:
        if count is None:
            return None
        total += count * addresses_per_instance(instance_type)
    return total + SUBNET_ADDRESS_MARGIN


def addresses_of_known_groups(
    groups: Sequence[tuple[str, str | None, int | None]],
) -> tuple[int, tuple[str, ...]]:
    """Subnet addresses (see :func:`required_addresses`) of the groups, given as ``(name,
    instance_type, instance_count)``, whose count is known and whose type SageMaker knows
    (botocore ``ClusterInstanceType``); and the names of the groups left out, whose type or
    count is wrong (reported on its own key): the count is then a lower bound."""
    types = shape_rule(member_shape_name(_SPEC, "InstanceType"))
    counted, left_out = [], []
    for name, instance_type, count in groups:
        if count is None or instance_type is None or types.problem(instance_type) is not None:
            left_out.append(name)
        else:
            counted.append((instance_type, count))
    return required_addresses(counted) or 0, tuple(left_out)


def check_instance_group(
    problems: Problems,
    field: str,
    *,
    name: str | None,
    role: str | None,
    instance_type: str | None,
    instance_count: int | None,
    threads_per_core: int | None,
    ebs_volume_gib: int | None,
    deep_health_checks: Sequence[str] | None,
    training_plan_arn: str | None,
    partition: str | None,
) -> None:
    """One group's settings (``role``: controller, login or worker)."""
    problems.check_shape(f"{field}.name", name, "ClusterInstanceGroupName")
    problems.check_shape(f"{field}.instance_type", instance_type, "ClusterInstanceType")
    problems.check_shape(
        f"{field}.instance_count", instance_count, member_shape_name(_SPEC, "InstanceCount")
    )
    if role == CONTROLLER and instance_count is not None and instance_count != 1:
        problems.add(
            f"{field}.instance_count",
            instance_count,
            "a CONTROLLER group must hold exactly 1 instance: the lifecycle scripts start one "
            "slurmctld on it (0 leaves the cluster without a controller, 2 or more start "
            "uncoordinated controllers)",
        )
    problems.check_shape(
        f"{field}.threads_per_core", threads_per_core, member_shape_name(_SPEC, "ThreadsPerCore")
    )
    problems.check_shape(
        f"{field}.ebs_volume_gib",
        ebs_volume_gib,
        member_shape_name("ClusterEbsVolumeConfig", "VolumeSizeInGB"),
    )
    problems.check_shape(
        f"{field}.training_plan_arn",
        training_plan_arn,
        member_shape_name(_SPEC, "TrainingPlanArn"),
    )
    if deep_health_checks:
        _check_deep_health_checks(problems, field, deep_health_checks, instance_type)
    if partition is not None and role is not None:
        _check_partition(problems, field, partition, role)


def _check_deep_health_checks(
    problems: Problems, field: str, checks: Sequence[str], instance_type: str | None
) -> None:
    """Each check is one botocore knows, on a type the checks run on."""
    for position, check in enumerate(checks):
        problems.check_shape(
            f"{field}.deep_health_checks[{position}]", check, "DeepHealthCheckType"
        )
    if instance_type is not None and not supports_deep_health_checks(instance_type):
        problems.add(
            f"{field}.deep_health_checks",
            tuple(checks),
            f"deep health checks run only on NVIDIA GPU and Trainium instances, "
            f"not on {instance_type}; leave them unset or use ()",
        )


def _check_partition(problems: Problems, field: str, partition: str, role: str) -> None:
    """Only a worker group has a partition, named as botocore allows."""
    if role != WORKER:
        problems.add(
            f"{field}.partition",
            partition,
            f"only WORKER groups have a Slurm partition; this group is {role.upper()}",
        )
    else:
        problems.check_shape(f"{field}.partition", partition, "ClusterPartitionName")


def check_min_count(
    problems: Problems, field: str, min_count: int | None, instance_count: int | None
) -> None:
    """``MinInstanceCount``: botocore's range, and at most the group's ``instance_count``
    (the CloudFormation schema: "MinInstanceCount must be less than or equal to
    InstanceCount")."""
    problems.check_shape(field, min_count, member_shape_name(_SPEC, "MinInstanceCount"))
    if min_count is not None and instance_count is not None and min_count > instance_count:
        problems.add(
            field,
            min_count,
            f"must be at most the group's instance_count ({instance_count})",
        )


def check_capacity(problems: Problems, field: str, capacity: str | None) -> None:
    """``on_demand``; ``spot`` is refused with the reason (:data:`SPOT_UNSUPPORTED`)."""
    if capacity == SPOT:
        problems.add(field, capacity, SPOT_UNSUPPORTED)
    else:
        problems.check_choice(field, capacity, CAPACITY_MEMBERS)


def check_image_id(problems: Problems, field: str, image_id: str | None) -> None:
    """An AMI ID (``ami-`` and 8-17 hex digits) botocore's ``ImageId`` accepts. ``default``,
    which the API also takes, is refused: the CloudFormation schema gives ``ImageId`` the
    format ``AWS::EC2::Image.Id``, which only AMI IDs meet (cfn-lint and aws-cdk-lib's
    template validation report it); leaving the image unset gives the latest one."""
    if image_id == "default":
        problems.add(
            field,
            image_id,
            "leave image_id unset for HyperPod's latest image: CloudFormation's schema takes "
            "only AMI IDs here (format AWS::EC2::Image.Id)",
        )
        return
    problems.check_shape(field, image_id, member_shape_name(_SPEC, "ImageId"))


def check_group_roles(
    problems: Problems, field: str, groups: Sequence[tuple[str | None, str | None]]
) -> None:
    """Names unique, exactly one controller group and at most one login group, for groups
    given as ``(name, role)``."""
    problems.check_unique(f"{field}[*].name", (name for name, _ in groups))
    if any(role is None for _, role in groups):
        return  # a group's role is unknown: the counts below would mislead
    controllers = [name for name, role in groups if role == CONTROLLER]
    if len(controllers) != 1:
        problems.add(
            f"{field}[*].role",
            controllers,
            f"exactly one group must have role CONTROLLER (the Slurm head node); "
            f"found {len(controllers)}",
        )
    logins = [name for name, role in groups if role == LOGIN]
    if len(logins) > 1:
        problems.add(
            f"{field}[*].role",
            logins,
            f"at most one group may have role LOGIN; found {len(logins)}",
        )
