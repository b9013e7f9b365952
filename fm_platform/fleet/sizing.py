"""How much of an instance one copy of a model takes.

Memory per copy = weights x 1.2 + 1 GiB, where weights = parameters x bytes per parameter
of the dtype. The 20% covers the KV cache at a modest batch and activations; the 1 GiB the
runtime (CUDA context, server process). ``memory_gib`` in the catalog replaces the estimate.

Accelerators per copy on a type = the accelerator memory needed over one device's memory,
rounded up to a power of two (tensor-parallel degrees are powers of two); a copy that needs
more devices than the type has does not fit it. Host memory requested per copy = the copy's
memory (weights pass through host memory while loading), at least 2 GiB; CPU cores = the
type's vCPUs per accelerator x accelerators, half of that so the host keeps room for
SageMaker's agents. CPU-only types (multi-model endpoints) take no accelerators.

Candidate types are those both in the hardware data file and in the price file.
Inferentia and Trainium need models compiled for Neuron, so they are candidates only for a
model that names their family (``instance_family: inf2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from fm_platform.fleet.catalog import DTYPE_BYTES, ModelEntry
from fm_platform.hardware.instances import InstanceSpec, instance_spec
from fm_platform.hardware.prices import hourly_prices

GIB = 1024**3
KV_RUNTIME_FACTOR = 1.2
RUNTIME_GIB = 1.0
MIN_HOST_MIB = 2048
NEURON = ("inferentia", "trainium")


def family(instance_type: str) -> str:
    """``ml.g5.12xlarge`` -> ``g5``."""
    return instance_type.split(".")[1]


@cache
def copy_memory_gib(model: ModelEntry) -> float:
    """Accelerator memory one copy needs (GiB): ``memory_gib`` or weights x 1.2 + 1."""
    if model.memory_gib is not None:
        return model.memory_gib
    # The catalog requires params_b where memory_gib is not given.
    assert model.params_b is not None
    weights = model.params_b * 1e9 * DTYPE_BYTES[model.dtype] / GIB
    return weights * KV_RUNTIME_FACTOR + RUNTIME_GIB


@dataclass(frozen=True)
class CopyShape:
    """What one copy requests on one instance type (the packing vector)."""

    accelerators: int
    memory_mib: int
    cpu_cores: float


@cache
def priced_specs() -> tuple[InstanceSpec, ...]:
    """Instance types with both hardware figures and a price, cheapest first."""
    prices = hourly_prices()
    return tuple(sorted((instance_spec(t) for t in prices), key=lambda s: prices[s.instance_type]))


@cache
def copy_shape(model_gib: float, spec: InstanceSpec) -> CopyShape | None:
    """One copy's request on ``spec``, or None when a copy cannot fit one instance."""
    host_mib = max(MIN_HOST_MIB, math.ceil(model_gib * 1024))
    if not spec.is_accelerated:
        if host_mib > spec.memory_mib // 2:
            return None
        return CopyShape(0, host_mib, 1.0)
    per_device_gib = spec.accelerator_memory_mib_total / spec.accelerator_count / 1024
    devices = 1 << max(0, math.ceil(math.log2(max(1e-9, model_gib / per_device_gib))))
    if devices > spec.accelerator_count:
        return None
    if host_mib > spec.memory_mib * devices // spec.accelerator_count:
        return None
    cpu = max(1.0, spec.vcpus / spec.accelerator_count * devices / 2)
    return CopyShape(devices, host_mib, cpu)


def candidates(model: ModelEntry, *, accelerated: bool = True) -> list[InstanceSpec]:
    """Priced types a model may run on, cheapest first: its preferred family if any,
    else NVIDIA GPU types (CPU types when ``accelerated`` is false)."""
    specs = priced_specs()
    if model.instance_family is not None:
        return [s for s in specs if family(s.instance_type) == model.instance_family]
    if not accelerated:
        return [s for s in specs if not s.is_accelerated]
    return [s for s in specs if s.accelerator == "nvidia-gpu"]


def largest_memory() -> tuple[str, float]:
    """The priced type with the most accelerator memory and that memory in GiB."""
    spec = max(priced_specs(), key=lambda s: s.accelerator_memory_mib_total)
    return spec.instance_type, spec.accelerator_memory_mib_total / 1024


def families() -> set[str]:
    """The instance families a catalog may prefer (those with priced types)."""
    return {family(s.instance_type) for s in priced_specs()}
