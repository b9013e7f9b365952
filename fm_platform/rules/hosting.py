"""Rules of SageMaker real-time endpoints: hosting instance types, instance counts, VPC
options, and what multi-model endpoints accept."""

from __future__ import annotations

from collections.abc import Mapping

from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec
from fm_platform.rules.problems import Problems, did_you_mean
from fm_platform.rules.sagemaker_model import enum_values, member_shape_name

_MANAGED_SCALING = "ProductionVariantManagedInstanceScaling"


def check_hosting_instance_type(problems: Problems, field: str, instance_type: str | None) -> None:
    """A SageMaker hosting type (botocore ``ProductionVariantInstanceType``) this package
    has figures for."""
    if instance_type is None:
        return
    offered = enum_values("ProductionVariantInstanceType")
    if instance_type not in offered:
        problems.add(
            field,
            instance_type,
            "not an instance type SageMaker hosting offers (botocore enum "
            "ProductionVariantInstanceType); "
            + (did_you_mean(instance_type, offered) or "e.g. ml.m5.xlarge, ml.g5.12xlarge"),
        )
        return
    try:
        instance_spec(instance_type)
    except UnknownInstanceTypeError as error:
        problems.add(field, instance_type, error.args[0])


def check_managed_instance_counts(
    problems: Problems,
    *,
    initial_instance_count: int | None,
    min_instance_count: int | None,
    max_instance_count: int | None,
) -> None:
    """Instance counts of an endpoint with managed instance scaling: each within botocore's
    limits, and min <= initial <= max."""
    problems.check_shape(
        "initial_instance_count",
        initial_instance_count,
        member_shape_name("ProductionVariant", "InitialInstanceCount"),
    )
    problems.check_shape(
        "min_instance_count",
        min_instance_count,
        member_shape_name(_MANAGED_SCALING, "MinInstanceCount"),
    )
    problems.check_shape(
        "max_instance_count",
        max_instance_count,
        member_shape_name(_MANAGED_SCALING, "MaxInstanceCount"),
    )
    initial, low, high = initial_instance_count, min_instance_count, max_instance_count
    if initial is None or low is None or high is None:
        return
    if low > high:
        problems.add("min_instance_count", low, f"must not exceed max_instance_count ({high})")
    elif not low <= initial <= high:
        problems.add(
            "initial_instance_count",
            initial,
            f"must lie between min_instance_count ({low}) and max_instance_count ({high})",
        )


def check_vpc_options(problems: Problems, has_vpc: bool, given: Mapping[str, object]) -> None:
    """Each VPC option in ``given`` (field name to value) needs a VPC; an empty sequence
    counts as unset."""
    if has_vpc:
        return
    for name, value in given.items():
        if value is None or (isinstance(value, list | tuple) and not value):
            continue
        problems.add(name, value, "needs `vpc` to be set")


def check_s3_prefix(problems: Problems, field: str, prefix: str | None) -> None:
    """An S3 prefix ``s3://<bucket>/<path>/`` ending in ``/``."""
    if prefix is None:
        return
    if not (prefix.startswith("s3://") and prefix.endswith("/") and len(prefix) > len("s3://x/")):
        problems.add(field, prefix, "must be an S3 prefix s3://<bucket>/<path>/ ending in /")


def check_multi_model_hardware(problems: Problems, field: str, instance_type: str | None) -> None:
    """Multi-model endpoints run on CPU types or types with exactly one NVIDIA GPU."""
    if instance_type is None:
        return
    try:
        spec = instance_spec(instance_type)
    except UnknownInstanceTypeError:
        return  # reported by check_hosting_instance_type
    if spec.accelerator == "none":
        return
    if spec.accelerator == "nvidia-gpu" and spec.accelerator_count == 1:
        return
    problems.add(
        field,
        instance_type,
        f"has {spec.accelerator_count} x {spec.accelerator} accelerators; a multi-model "
        "endpoint needs a CPU instance type (e.g. ml.m5.xlarge) or one with exactly one "
        "NVIDIA GPU (e.g. ml.g5.xlarge); host multi-accelerator or Inferentia/Trainium "
        "models with inference components or a single-model endpoint",
    )
