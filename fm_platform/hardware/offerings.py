"""Which SageMaker hosting types a region offers, and the nearest one it does offer.

A type is offered in a region when the shipped price data (:mod:`fm_platform.hardware.prices`,
from the AWS Price List) prices it there: the types of ``instance_specs.json`` without a
price in a region are listed as ``unpriced`` for it (not offered there, or not priced by
the source). Nearest means the fewest changes to what a model was sized for: the same
accelerator count first, then the closest accelerator memory, host memory and vCPUs, then
the same family.
"""

from __future__ import annotations

import math

from fm_platform.hardware.instances import InstanceSpec, UnknownInstanceTypeError, instance_spec
from fm_platform.hardware.prices import hourly_prices


def offered_in(instance_type: str, region: str) -> bool:
    """True when ``region`` prices ``instance_type`` for hosting."""
    return instance_type in hourly_prices(region)


def _distance(wanted: InstanceSpec, other: InstanceSpec) -> tuple[float, ...]:
    def ratio(a: int, b: int) -> float:
        return abs(math.log((a + 1) / (b + 1)))

    return (
        float(wanted.accelerator != other.accelerator and wanted.is_accelerated),
        abs(wanted.accelerator_count - other.accelerator_count),
        ratio(wanted.accelerator_memory_mib_total, other.accelerator_memory_mib_total),
        ratio(wanted.memory_mib, other.memory_mib),
        ratio(wanted.vcpus, other.vcpus),
        float(_family(wanted.instance_type) != _family(other.instance_type)),
    )


def _family(instance_type: str) -> str:
    return instance_type.split(".")[1] if instance_type.count(".") >= 2 else instance_type


def nearest_offered(instance_type: str, region: str) -> str | None:
    """The hosting type ``region`` offers that is closest to ``instance_type`` (see the
    module's docstring); None when the type has no figures or the region prices nothing
    with figures."""
    try:
        wanted = instance_spec(instance_type)
    except UnknownInstanceTypeError:
        return None
    candidates = []
    for offered in sorted(hourly_prices(region)):
        try:
            candidates.append(instance_spec(offered))
        except UnknownInstanceTypeError:
            continue
    if not candidates:
        return None
    return min(candidates, key=lambda spec: _distance(wanted, spec)).instance_type
