"""A synth warning for accelerated instance types the instance data does not describe."""

from __future__ import annotations

from aws_cdk import Annotations
from constructs import Construct

from fm_platform.hardware.instances import (
    UnknownInstanceTypeError,
    instance_spec,
    looks_accelerated,
)


def warn_unknown_accelerated_type(scope: Construct, field: str, instance_type: str) -> None:
    """Warn on ``scope`` when ``instance_type`` (the value of ``field``) names an
    accelerated family but has no figures: the default deep health checks are left off and
    the subnet sizing counts one address per instance (no EFA interfaces)."""
    if not looks_accelerated(instance_type):
        return
    try:
        instance_spec(instance_type)
    except UnknownInstanceTypeError:
        Annotations.of(scope).add_warning_v2(
            "fm_platform:unknownInstanceType",
            f"{field}={instance_type!r} has no figures in the instance data: the default "
            "deep health checks were left off and EFA subnet sizing was skipped (one address "
            "per instance counted); add its figures with fm_platform.register_instance_type",
        )
