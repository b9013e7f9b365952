"""What the throughput estimate and the hardware rules read about an instance type: per
accelerator, memory bandwidth, dense FP32, TF32 and 16-bit tensor throughput and CUDA
compute capability; per CPU family, the peak FP32 throughput of one vCPU. Figures and
sources live in ``device_figures.json``; instance shapes (device count and memory) come
from :mod:`fm_platform.hardware.instances`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from fm_platform.hardware.instances import InstanceSpec

#: BF16 needs NVIDIA compute capability 8.0 (Ampere) or newer; FP8 8.9 (Ada, Hopper).
BF16_MIN_CAPABILITY = 8.0
FP8_MIN_CAPABILITY = 8.9
#: AVX-512 FP32 FLOPs per cycle of one vCPU: 16 lanes x 2 (fused multiply-add) x 2 FMA
#: units per core / 2 hyperthreads per core.
FP32_FLOPS_PER_CYCLE_PER_VCPU = 32


@dataclass(frozen=True)
class Device:
    """One accelerator: ``bandwidth_gbps`` (GB/s), ``tflops`` (dense FP16/BF16 tensor),
    ``fp32_tflops`` (dense FP32 without tensor cores), ``capability`` (CUDA compute
    capability; None for Neuron devices)."""

    model: str
    bandwidth_gbps: float
    tflops: float
    capability: float | None
    fp32_tflops: float

    def tflops_for(self, dtype: str) -> float:
        """Dense TFLOPS a model of ``dtype`` computes at: FP32 on CUDA cores for fp32 (the
        file's notes say why not TF32), the 16-bit tensor rate otherwise (int8/int4/fp8
        weights are dequantized to 16-bit activations)."""
        return self.fp32_tflops if dtype == "fp32" else self.tflops


@cache
def _data() -> dict:
    return json.loads(
        resources.files("fm_platform.hardware").joinpath("device_figures.json").read_text()
    )


def family(instance_type: str) -> str:
    """``ml.g5.12xlarge`` -> ``g5``."""
    return instance_type.split(".")[1]


@cache
def device(spec: InstanceSpec) -> Device | None:
    """The accelerator of ``spec`` (None for CPU types and devices without figures)."""
    if not spec.is_accelerated:
        return None
    record = _record_model(spec)
    if record is None:
        return None
    model, figures = record
    return Device(
        model,
        figures["memory_bandwidth_gbps"],
        figures["dense_tflops_16bit"],
        figures["compute_capability"],
        figures["dense_tflops_fp32"],
    )


@cache
def _accelerator_models() -> dict[str, str]:
    """``accelerator_model`` per type, from the package's hardware data file."""
    text = resources.files("fm_platform.hardware").joinpath("instance_specs.json").read_text()
    records = json.loads(text)["instance_types"]
    return {name: r["accelerator_model"] for name, r in records.items() if r["accelerator_model"]}


def _record_model(spec: InstanceSpec) -> tuple[str, dict] | None:
    data = _data()
    name = data["family_accelerator"].get(family(spec.instance_type))
    if name is None:
        name = _accelerator_models().get(spec.instance_type)
    figures = data["accelerators"].get(name) if name else None
    return (name, figures) if figures is not None else None


@cache
def vcpu_gflops(spec: InstanceSpec) -> float | None:
    """Peak FP32 GFLOPS of one vCPU of a CPU type (None for families without figures)."""
    return family_vcpu_gflops(family(spec.instance_type))


def family_vcpu_gflops(name: str) -> float | None:
    """Peak FP32 GFLOPS of one vCPU of the CPU family ``name`` (``m5``; None without
    figures)."""
    figures = _data()["cpu_families"].get(name)
    if figures is None:
        return None
    return float(figures["ghz"]) * FP32_FLOPS_PER_CYCLE_PER_VCPU
