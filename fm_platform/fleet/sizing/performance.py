"""Sustained requests per minute of one model copy at its latency objective.

In order of preference:

1. ``rpm_per_copy`` in the catalog (``catalog``): the team's own measurement.
2. The model's benchmark results file (``benchmark``, see :mod:`fm_platform.fleet.sizing.profiles`)
   on that instance type.
3. A shipped profile of its architecture (or of the architecture it is measured as, see
   :func:`fm_platform.fleet.sizing.profiles.measured_as`) on that type and tensor-parallel degree
   (``measured``).
4. An estimate from the hardware (``estimated``):

   - text generation decodes one token per step for every running sequence, and a step
     reads the weights its tokens pass through (all of a dense model's; of a mixture of
     experts, the shared weights and the experts its tokens touch:
     :meth:`fm_platform.fleet.sizing.needs.Needs.weights_read_bytes`) plus the sequences' KV
     cache, so it is memory-bandwidth-bound:
     step = bytes read / (devices x bandwidth x efficiency) + the step's fixed costs, with
     constants per device family (:mod:`fm_platform.fleet.sizing.decode_step`: GPUs 75%, 3 ms and
     4 ms x log2(devices) for tensor parallelism's all-reduces; Neuron devices 49%, 3.7 ms
     and 6.8 ms x concurrency / devices, fitted on the Inferentia2 rows); a prompt's
     prefill is compute-bound, 2 x active parameters x prompt tokens / (devices x 16-bit
     tensor FLOPS x 0.4), and with continuous batching every running request's prefill
     stalls the others: request latency = concurrency x prefill + (output tokens + 1) x
     step; requests per minute = 60 x concurrency / request latency (Little's law).
     Against the 203 shipped text-generation rows this gives a median of 0.92x the
     measured rate (0.45x to 2.17x; both ends are TGI 2023 on g5 at 20 concurrent, whose
     time per token grows far faster with concurrency than its KV reads), a check the
     tests repeat.
   - embedding and classification are compute-bound: one request takes 2 x active
     parameters x prompt tokens FLOPs at 40% of the devices' 16-bit tensor FLOPS (GPU) or
     30% of the vCPUs' peak FP32 FLOPS (CPU, ``hardware.json``); requests per minute =
     60 / that time. Image generation and speech to text are estimated the same way from
     what one image or recording computes (:mod:`fm_platform.fleet.sizing.diffusion`, at the
     efficiency calibrated on the measured image rows; :mod:`fm_platform.fleet.sizing.speech`,
     whose decoded tokens also read the decoder's weights and cross-attention cache, its
     rate scaled by the median ratio of measured to estimated of the measured speech rows:
     :func:`speech_calibration`).

5. Nothing to estimate from (a device without figures): 60 requests per minute
   (``default``), flagged in the plan.

Measured figures are converted to the model's output length (requests per minute scale
with output tokens per request; latency = first token + output tokens x per-token
latency).

Batch before copies: a text-generation copy runs the most concurrent sequences that its
memory (the paged KV pool of that many prompt + output sequences, :class:`~fm_platform.fleet.
sizing.needs.Needs`), the engine's limit (the catalog's ``concurrency``, else vLLM's
default ``max_num_seqs`` of 256, :data:`~fm_platform.fleet.sizing.needs.MAX_CONCURRENCY`)
and the latency objective allow, among the batch sizes vLLM captures CUDA graphs for (1,
2, 4 and multiples of 8: :data:`CONCURRENCIES`). Under continuous batching a request's
latency grows linearly with the running sequences (the prefills it waits for, the KV
each step reads) while the copy's requests per minute, 60 x concurrency / latency, keep
rising, and a copy costs its devices whatever it runs: the largest concurrency gives the
fewest copies at the lowest expected cost. The detail names the limit that bound it, and
says when it is above the concurrency the estimate is checked at (the largest of the
shipped measured rows, :func:`fm_platform.fleet.sizing.profiles.checked_concurrency`).
Measured points are used at any concurrency up to the limit that fits and meets the
objective (the one with the highest converted requests per minute).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from fm_platform.fleet.models.catalog import Catalog, ModelEntry
from fm_platform.fleet.sizing.decode_step import GPU, DecodeConstants, for_device
from fm_platform.fleet.sizing.needs import MAX_CONCURRENCY, Needs, resolve
from fm_platform.fleet.sizing.profiles import Record, checked_concurrency
from fm_platform.fleet.sizing.speech import SPEECH, speech_rows
from fm_platform.hardware.devices import Device, device, vcpu_gflops
from fm_platform.hardware.instances import InstanceSpec, instance_spec

COMPUTE_EFFICIENCY = 0.4
CPU_EFFICIENCY = 0.3
#: What every request costs beside the model (HTTP, SageMaker's routing, tokenization),
#: in ms.
REQUEST_OVERHEAD_MS = 10.0
#: Memory bandwidth a CPU type's decode reads weights at (GB/s; DDR4/DDR5 of one socket).
CPU_BANDWIDTH_GBPS = 100.0
DEFAULT_RPM = 60.0


@dataclass(frozen=True)
class Performance:
    """One copy at ``concurrency`` concurrent requests: ``rpm`` sustained, per-token and
    request latency (ms; None when unknown), where the figure comes from (``source``) and
    how (``detail``)."""

    rpm: float
    concurrency: int
    tpot_ms: float | None
    latency_ms: float | None
    source: str
    detail: str

    def meets(self, objective_ms: float) -> bool:
        return self.latency_ms is None or self.latency_ms <= objective_ms


#: The batch sizes vLLM captures CUDA graphs for, up to its default ``max_num_seqs``
#: (vllm ``worker/model_runner.py``: ``_BATCH_SIZES_TO_CAPTURE = [1, 2, 4] + [8 * i for i
#: in range(1, 33)]``): the concurrencies a copy is planned at.
CONCURRENCIES = (1, 2, 4, *range(8, MAX_CONCURRENCY + 1, 8))


def concurrencies(limit: int) -> tuple[int, ...]:
    """The concurrencies a copy may run at under ``limit`` (the catalog's, or the
    engine's), ascending: :data:`CONCURRENCIES` below it and the limit itself."""
    return (*(c for c in CONCURRENCIES if c < limit), limit)


def largest(candidates: tuple[int, ...], ok: Callable[[int], bool]) -> int | None:
    """The largest of ``candidates`` (ascending) that is ``ok``, where ``ok`` holds up to a
    point and not beyond it (memory and latency both grow with concurrency); None when
    none is. A binary search: a handful of checks among 35 candidates."""
    low, high = 0, len(candidates)
    while low < high:
        middle = (low + high) // 2
        if ok(candidates[middle]):
            low = middle + 1
        else:
            high = middle
    return candidates[low - 1] if low else None


def _bound_by(needs: Needs, candidates: tuple[int, ...], chosen: int, fits) -> str:
    """What keeps a copy at ``chosen`` of ``candidates``: the limit, memory or the
    objective; and whether the estimate is checked that high."""
    if chosen == candidates[-1]:
        limit = (
            f"the engine's limit of {MAX_CONCURRENCY}"
            if chosen == MAX_CONCURRENCY
            else "the catalog's concurrency"
        )
    elif not fits(candidates[candidates.index(chosen) + 1]):
        limit = "memory holds no more"
    else:
        limit = "more misses the objective"
    checked = checked_concurrency()
    beyond = (
        f"; above the {checked} concurrent sequences the estimate is checked at"
        if chosen > checked
        else ""
    )
    return f" ({limit}{beyond})"


def decode_estimate(
    needs: Needs, dev: Device, tp: int, concurrency: int, step: DecodeConstants | None = None
) -> Performance:
    """The bandwidth-bound estimate of a text-generation copy (module docstring), with the
    step constants of the device's family unless ``step`` is given."""
    step = for_device(dev) if step is None else step
    return _decode_performance(
        needs, dev, tp, concurrency, step, *_decode_times(needs, dev, tp, concurrency, step)
    )


def _decode_times(
    needs: Needs, dev: Device, tp: int, concurrency: int, step: DecodeConstants
) -> tuple[float, float]:
    """A decode step and a request's latency in ms (:func:`decode_estimate`)."""
    moved = needs.decode_step_bytes(tp, concurrency)
    step_ms = step.step(moved, tp, dev.bandwidth_gbps, concurrency)
    prefill = 2 * needs.active_params_b * 1e9 * needs.prompt_tokens
    prefill_ms = prefill / (tp * dev.tflops_for(needs.dtype) * 1e12 * COMPUTE_EFFICIENCY) * 1000
    latency = concurrency * prefill_ms + step_ms + needs.output_tokens * step_ms
    return step_ms, latency + REQUEST_OVERHEAD_MS


def _decode_performance(
    needs: Needs,
    dev: Device,
    tp: int,
    concurrency: int,
    step: DecodeConstants,
    step_ms: float,
    latency: float,
) -> Performance:
    """:func:`decode_estimate`'s result from its step and latency."""
    fitted = f", {step.fitted}" if step.fitted else ""
    experts = _experts_detail(needs, concurrency)
    return Performance(
        rpm=60_000 * concurrency / latency,
        concurrency=concurrency,
        tpot_ms=step_ms,
        latency_ms=latency,
        source="estimated",
        detail=f"decode bandwidth-bound on {tp} x {dev.model} ({dev.bandwidth_gbps:g} GB/s x "
        f"{step.efficiency:g}{fitted}) at concurrency {concurrency}{experts}",
    )


def _experts_detail(needs: Needs, concurrency: int) -> str:
    if not needs.experts or not needs.experts_per_token:
        return ""
    share = needs.weights_read_bytes(concurrency) / (needs.weights_gib * 2**30)
    return (
        f", reading {share:.0%} of the weights a step (experts: {needs.experts_per_token} "
        f"of {needs.experts} per token)"
    )


def request_seconds(
    needs: Needs,
    flops: float,
    bandwidth_gbps: float | None = None,
    step: DecodeConstants = GPU,
) -> float:
    """The uncalibrated time of one request of a copy that serves one at a time (encoders,
    speech, diffusion) with ``flops`` usable FLOPS: the request's FLOPs, its decoded tokens'
    weight reads at ``bandwidth_gbps`` with the device's decode constants ``step``
    (speech; :func:`~fm_platform.fleet.sizing.decode_step.for_device`, by default the
    GPU's), and the per-request overhead."""
    seconds = needs.request_flops / flops + REQUEST_OVERHEAD_MS / 1000
    if needs.decode_bytes_per_token and needs.output_tokens:
        bandwidth = (bandwidth_gbps or CPU_BANDWIDTH_GBPS) * 1e9 * step.efficiency
        seconds += needs.output_tokens * (
            needs.decode_bytes_per_token / bandwidth + step.step_ms / 1000
        )
    return seconds


def speech_row_rpm(row: dict) -> float:
    """The uncalibrated estimate of a measured speech row (``data/performance.json``
    ``speech_records``): requests per minute of its model, dtype and audio on its devices,
    as the planner estimates them."""
    model = ModelEntry(
        name="m", architecture=row["model"], dtype=row["dtype"], audio_seconds=row["audio_seconds"]
    )
    needs = resolve(model, Catalog("check", (model,)))
    dev = device(instance_spec(row["instance_type"]))
    assert dev is not None, row["instance_type"]
    flops = row["devices"] * dev.tflops_for(needs.dtype) * 1e12 * COMPUTE_EFFICIENCY
    return 60 / request_seconds(needs, flops, row["devices"] * dev.bandwidth_gbps, for_device(dev))


@cache
def speech_calibration() -> tuple[float, str]:
    """The factor a speech request's estimated rate is scaled by: the median, over the
    measured speech rows, of measured to estimated requests per minute; and what it came
    from."""
    rows = speech_rows()
    ratios = [60 / r["latency_s"] / speech_row_rpm(r) for r in rows]
    labels = ", ".join(
        f"{r['model']} {r['instance_type']} {r['audio_seconds']:g} s {ratio:.2f}"
        for r, ratio in zip(rows, ratios, strict=True)
    )
    return statistics.median(ratios), (
        f"the median ratio of measured to estimated rate of {len(rows)} measured rows of "
        f"data/performance.json ({labels})"
    )


def encode_estimate(
    needs: Needs,
    flops: float,
    what: str,
    bandwidth_gbps: float | None = None,
    step: DecodeConstants = GPU,
) -> Performance:
    """The compute-bound estimate of a copy that serves one request at a time
    (:func:`request_seconds`), a speech request's scaled by :func:`speech_calibration`;
    the detail ends with what the request's work came from (``work_detail``)."""
    seconds = request_seconds(needs, flops, bandwidth_gbps, step)
    calibrated = ""
    if needs.task == SPEECH:
        factor, source = speech_calibration()
        seconds /= factor
        calibrated = f"; rate x {factor:.2f}: {source}"
    return Performance(
        rpm=60 / seconds,
        concurrency=1,
        tpot_ms=None,
        latency_ms=seconds * 1000,
        source="estimated",
        detail=f"compute-bound on {what}, {REQUEST_OVERHEAD_MS:g} ms per request"
        + (f"; {needs.work_detail}" if needs.work_detail else "")
        + calibrated,
    )


def cpu_flops(spec: InstanceSpec) -> float | None:
    """Usable FLOPS of a CPU type: its vCPUs' peak FP32 at :data:`CPU_EFFICIENCY` (None
    for families without figures)."""
    gflops = vcpu_gflops(spec)
    return None if gflops is None else spec.vcpus * gflops * 1e9 * CPU_EFFICIENCY


def best_estimate(needs: Needs, dev: Device, tp: int, fits) -> Performance | None:
    """The decode estimate at the largest concurrency (module docstring) that
    ``fits(concurrency)`` in memory and meets the objective; None when none does."""
    step = for_device(dev)

    def ok(concurrency: int) -> bool:
        if not fits(concurrency):
            return False
        return _decode_times(needs, dev, tp, concurrency, step)[1] <= needs.latency_objective_ms

    candidates = concurrencies(needs.concurrency)
    concurrency = largest(candidates, ok)
    if concurrency is None:
        return None
    perf = _decode_performance(
        needs, dev, tp, concurrency, step, *_decode_times(needs, dev, tp, concurrency, step)
    )
    bound = _bound_by(needs, candidates, concurrency, fits)
    return dataclasses.replace(perf, detail=perf.detail + bound)


def from_records(
    needs: Needs, records: tuple[Record, ...], source: str, fits
) -> Performance | None:
    """The best measured point (highest converted rpm) at a concurrency that ``fits`` and
    meets the objective, converted to the model's output length; None when none does."""
    best = None
    for r in records:
        if r.concurrency > needs.concurrency or not fits(r.concurrency):
            continue
        # a row without output tokens is at the model's own request shape
        scale = r.output_tokens / needs.output_tokens if needs.output_tokens else 1.0
        if not r.output_tokens:
            scale = 1.0
        if r.tpot_ms is not None and needs.output_tokens and r.output_tokens:
            latency = (r.ttft_ms or r.tpot_ms) + needs.output_tokens * r.tpot_ms
        else:
            latency = r.latency_p50_ms / scale if scale else r.latency_p50_ms
        if latency > needs.latency_objective_ms:
            continue
        perf = Performance(
            rpm=r.rpm * scale,
            concurrency=r.concurrency,
            tpot_ms=r.tpot_ms,
            latency_ms=latency,
            source=source,
            detail=f"{r.source} ({r.rpm:g} rpm at {r.output_tokens:g} output tokens); "
            "a measurement, used over any estimate",
        )
        if best is None or perf.rpm > best.rpm:
            best = perf
    return best


def _fitting(needs: Needs, fits: Callable[[int], bool]) -> int:
    """The concurrency of a copy without an estimate: the most that ``fits`` up to the
    limit (text generation), one request at a time otherwise."""
    if not needs.generative:
        return 1
    return largest(concurrencies(needs.concurrency), fits) or 1


def override(needs: Needs, fits: Callable[[int], bool]) -> Performance:
    """The catalog's ``rpm_per_copy``, at the most concurrent sequences that fit."""
    assert needs.rpm_override is not None
    concurrency = _fitting(needs, fits)
    return Performance(needs.rpm_override, concurrency, None, None, "catalog", "rpm_per_copy")


def default(needs: Needs, fits: Callable[[int], bool]) -> Performance:
    """Nothing to estimate from: :data:`DEFAULT_RPM`, at the most concurrent sequences
    that fit."""
    concurrency = _fitting(needs, fits)
    return Performance(DEFAULT_RPM, concurrency, None, None, "default", "no figures for the device")
