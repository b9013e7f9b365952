"""What one model needs: weights, KV cache, request shape and latency objective, resolved
from its catalog entry, its architecture and the documented defaults.

Memory of one copy on ``tp`` devices (tensor parallelism splits the attention heads, so
``tp`` must divide them; KV heads are replicated when ``tp`` exceeds them):

    weights = parameters x bytes per parameter of the dtype
    KV cache per token = layers x KV heads x head dimension x 2 (K and V) x bytes per value
                         (2, or 4 for fp32 models; quantized weights keep 16-bit activations)
    KV cache = per token x context_tokens x concurrency
    fits when weights + KV cache <= 90% of the ``tp`` devices' memory

90% is vLLM's default ``gpu_memory_utilization`` (the engine keeps the rest for the CUDA
context). ``memory_gib`` in the catalog replaces weights + KV cache.

A model without architecture figures gets the KV cache of a multi-head-attention model of
its size (Llama-2-7B's 512 KiB per token per 6.74 B parameters, scaled), flagged as a
default. Defaults by latency class (strict / standard / relaxed): ``context_tokens``
4096 / 8192 / 8192 (at most the architecture's context), ``concurrency`` 8 / 16 / 32, and a
p50 latency objective of first-token allowance + ``output_tokens`` x per-token target:
500 ms + 30 ms, 1000 ms + 60 ms, 3000 ms + 150 ms per token; ``batch`` takes relaxed's.
Whatever the objective, a kind serves the model only on types whose request latency fits
the kind's request limit (real-time 60 s, asynchronous 1 hour:
:mod:`fm_platform.fleet.kinds`). Requests default to 1024 prompt
and 256 output tokens for text generation, 256 and 0 for embedding and classification.
``peak_rpm`` defaults to 60.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fm_platform.fleet.architectures import Architecture, architecture
from fm_platform.fleet.catalog import DTYPE_BYTES, GENERATIVE_TASKS, Catalog, ModelEntry
from fm_platform.fleet.kinds import BATCH
from fm_platform.fleet.weights import container_of

GIB = 1024**3
#: vLLM's default gpu_memory_utilization: the share of device memory the engine uses.
DEVICE_MEMORY_SHARE = 0.9
#: Host memory one copy asks for at least (MiB); weights pass through host memory.
MIN_HOST_MIB = 2048
DEFAULT_PEAK_RPM = 60.0
#: Llama-2-7B (multi-head attention): 32 layers x 32 KV heads x 128 x 2 x 2 bytes per token.
MHA_KV_BYTES_PER_PARAM = 32 * 32 * 128 * 2 * 2 / 6.74e9
CLASS_CONTEXT = {"strict": 4096, "standard": 8192, "relaxed": 8192, BATCH: 8192}
CLASS_CONCURRENCY = {"strict": 8, "standard": 16, "relaxed": 32, BATCH: 32}
#: (first-token allowance ms, per-output-token target ms) of the default p50 objective.
CLASS_LATENCY = {
    "strict": (500.0, 30.0),
    "standard": (1000.0, 60.0),
    "relaxed": (3000.0, 150.0),
    BATCH: (3000.0, 150.0),
}
GENERATIVE_REQUEST = (1024, 256)
ENCODER_REQUEST = (256, 0)


@dataclass(frozen=True)
class Needs:
    """One model's resolved requirements. ``defaults`` names every input that came from a
    default rather than the catalog or an architecture; ``batch``: its callers do not wait
    (``latency_class: batch``); ``payload_mb``: its largest request body (None: small)."""

    name: str
    task: str
    generative: bool
    architecture: str | None
    params_b: float
    active_params_b: float
    dtype: str
    weights_gib: float
    memory_gib: float | None
    layers: int | None
    attention_heads: int | None
    kv_heads: int | None
    head_dim: int | None
    kv_bytes_per_token: float
    prompt_tokens: int
    output_tokens: int
    context_tokens: int
    concurrency: int
    latency_objective_ms: float
    batch: bool
    payload_mb: float | None
    peak_rpm: float
    active_hours: float
    rpm_override: float | None
    benchmark: tuple[Path, str | None] | None
    allow_fp16: bool
    neuron_compiled: bool
    instance_family: str | None
    framework: str
    defaults: tuple[str, ...]
    #: the container family (:func:`fm_platform.fleet.weights.container_of`)
    container: str = "lmi"

    def kv_gib(self, tensor_parallel: int, concurrency: int) -> float:
        """KV cache of ``concurrency`` sequences of ``context_tokens`` on ``tensor_parallel``
        devices (KV heads replicated when there are fewer than devices)."""
        if not self.generative:
            return 0.0
        per_token = self.kv_bytes_per_token
        if self.kv_heads and tensor_parallel > self.kv_heads:
            per_token *= tensor_parallel / self.kv_heads
        return per_token * self.context_tokens * concurrency / GIB

    def copy_gib(self, tensor_parallel: int, concurrency: int) -> float:
        """Device memory of one copy: ``memory_gib``, else weights + KV cache."""
        if self.memory_gib is not None:
            return self.memory_gib
        return self.weights_gib + self.kv_gib(tensor_parallel, concurrency)

    def host_mib(self) -> int:
        """Host memory one copy asks for: its weights, at least 2 GiB."""
        return max(MIN_HOST_MIB, math.ceil((self.memory_gib or self.weights_gib) * 1024))

    def tp_allowed(self, tensor_parallel: int) -> bool:
        """Tensor parallelism splits attention heads: ``tp`` must divide them."""
        return not self.attention_heads or self.attention_heads % tensor_parallel == 0


def _kv(model: ModelEntry, arch: Architecture | None, params_b: float) -> tuple[float, str]:
    value_bytes = 4.0 if model.dtype == "fp32" else 2.0
    fields = (model.layers, model.kv_heads or model.attention_heads, model.head_dim)
    if all(fields):
        layers, kv_heads, head_dim = fields
        return layers * kv_heads * head_dim * 2 * value_bytes, "catalog"  # type: ignore[operator]
    if arch is not None:
        return arch.kv_bytes_per_token_per_byte * value_bytes, "architecture"
    return MHA_KV_BYTES_PER_PARAM * params_b * 1e9 * value_bytes / 2, "default"


def resolve(model: ModelEntry, catalog: Catalog) -> Needs:
    """The :class:`Needs` of ``model`` (see the module docstring for the rules)."""
    arch = architecture(model.architecture) if model.architecture else None
    defaults: list[str] = []
    task = model.task or (arch.task if arch else "text-generation")
    if model.task is None and arch is None:
        defaults.append("task")
    generative = task in GENERATIVE_TASKS
    params_b = model.params_b or (arch.params_b if arch else None)
    bytes_per_param = DTYPE_BYTES[model.dtype]
    if params_b is None:  # memory_gib only: the weights are what the catalog says a copy needs
        params_b = (model.memory_gib or 0) * GIB / bytes_per_param / 1e9
    active_b = arch.active_params_b * params_b / arch.params_b if arch else params_b
    kv_per_token, kv_from = _kv(model, arch, params_b)
    if generative and kv_from == "default" and model.memory_gib is None:
        defaults.append("kv_cache")
    prompt, output = GENERATIVE_REQUEST if generative else ENCODER_REQUEST
    max_context = arch.max_context if arch else None
    if model.prompt_tokens is None:
        defaults.append("prompt_tokens")
        prompt = min(prompt, max_context or prompt)
    if model.output_tokens is None and generative:
        defaults.append("output_tokens")
    prompt = model.prompt_tokens or prompt
    output = model.output_tokens if model.output_tokens is not None else output
    context = model.context_tokens
    if context is None:
        context = max(CLASS_CONTEXT[model.latency_class], prompt + output)
        context = min(context, max_context or context)
        if generative:
            defaults.append("context_tokens")
    concurrency = model.concurrency or CLASS_CONCURRENCY[model.latency_class]
    if model.concurrency is None and generative:
        defaults.append("concurrency")
    first, per_token = CLASS_LATENCY[model.latency_class]
    objective = model.latency_p50_ms or first + output * per_token
    if model.peak_rpm is None:
        defaults.append("peak_rpm")
    benchmark = None
    if model.benchmark_file is not None:
        path = Path(model.benchmark_file)
        benchmark = (
            path if path.is_absolute() else catalog.base_dir / path,
            model.benchmark_experiment,
        )
    return Needs(
        name=model.name,
        task=task,
        generative=generative,
        architecture=model.architecture,
        params_b=params_b,
        active_params_b=active_b,
        dtype=model.dtype,
        weights_gib=params_b * 1e9 * bytes_per_param / GIB,
        memory_gib=model.memory_gib,
        layers=model.layers or (arch.layers if arch else None),
        attention_heads=model.attention_heads or (arch.attention_heads if arch else None),
        kv_heads=model.kv_heads or (arch.kv_heads if arch else None),
        head_dim=model.head_dim or (arch.head_dim if arch else None),
        kv_bytes_per_token=kv_per_token,
        prompt_tokens=prompt,
        output_tokens=output,
        context_tokens=context,
        concurrency=concurrency,
        latency_objective_ms=float(objective),
        batch=model.latency_class == BATCH,
        payload_mb=model.payload_mb,
        peak_rpm=DEFAULT_PEAK_RPM if model.peak_rpm is None else float(model.peak_rpm),
        active_hours=model.active_hours,
        rpm_override=model.rpm_per_copy,
        benchmark=benchmark,
        allow_fp16=model.allow_fp16,
        neuron_compiled=model.neuron_compiled,
        instance_family=model.instance_family,
        framework=model.framework,
        defaults=tuple(defaults),
        container=container_of(model, task),
    )


@cache
def _tp_degrees(count: int) -> tuple[int, ...]:
    return tuple(1 << i for i in range(count.bit_length()) if 1 << i <= count)


def tp_degrees(count: int) -> tuple[int, ...]:
    """Tensor-parallel degrees on a type with ``count`` devices: powers of two up to it."""
    return _tp_degrees(max(1, count))
