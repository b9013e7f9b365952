"""How far the throughput estimate is from the measured rows the package ships
(``data/performance.json``): each row is held out in turn, the estimate is calibrated on
the others (the median ratio of measured to estimated throughput of its task) and
compared with the held-out row. ``make bench`` prints the median and worst error.

Text generation rows: the decode estimate of :mod:`fm_platform.fleet.sizing.performance` at the
row's concurrency, prompt and output tokens (500 prompt tokens where the source states
none). The Neuron step constants (:data:`fm_platform.fleet.sizing.decode_step.NEURON`) are fitted
on the Inferentia2 rows of dense models: when one of those is held out, they are fitted
again without it, and that fit estimates it and the other Neuron rows it is calibrated
on. Image rows: the compute-bound estimate of one image at the row's steps
(:mod:`fm_platform.fleet.sizing.diffusion`) at the uncalibrated 40% of the devices' 16-bit rate,
so that the held-out row takes no part in its own calibration. Encoder rows (a model library's
runs, or a server's batched requests): the compute time of one sequence at the row's
tokens on the row's devices (or, for a CPU type, its vCPUs), without the per-request
serving overhead, against the measured sequences per second. Speech rows: the
uncalibrated estimate of one recording at the row's audio length, dtype and devices
(:func:`fm_platform.fleet.sizing.performance.speech_row_rpm`: without the calibration the
planner applies, the median over all the speech rows, so that the held-out row takes no
part in its own calibration).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import cache

from fm_platform.fleet.models.catalog import Catalog, ModelEntry
from fm_platform.fleet.sizing.decode_step import (
    NEURON,
    DecodeConstants,
    DecodePoint,
    fit,
    for_device,
)
from fm_platform.fleet.sizing.measured import performance_data
from fm_platform.fleet.sizing.needs import Needs, resolve
from fm_platform.fleet.sizing.performance import (
    COMPUTE_EFFICIENCY,
    cpu_flops,
    decode_estimate,
    encode_estimate,
    speech_row_rpm,
)
from fm_platform.fleet.sizing.speech import SPEECH, speech_rows
from fm_platform.hardware.devices import Device, device
from fm_platform.hardware.instances import InstanceSpec, instance_spec

#: Prompt tokens assumed where a source does not state them (the 2023 TGI runs).
UNSTATED_PROMPT_TOKENS = 500


@dataclass(frozen=True)
class Check:
    """One measured row against the estimate: requests per minute of one copy."""

    task: str
    label: str
    measured_rpm: float
    estimated_rpm: float


def _encoder_flops(spec: InstanceSpec, devices: int | None, dtype: str) -> float:
    """Usable FLOPS of an encoder row: ``devices`` of the type's accelerator at the
    dtype's rate, or (``devices`` null) all the vCPUs of a CPU type, as the planner
    estimates them."""
    if devices is None:
        flops = cpu_flops(spec)
        assert flops is not None
        return flops
    dev = device(spec)
    assert dev is not None
    return devices * dev.tflops_for(dtype) * 1e12 * COMPUTE_EFFICIENCY


@cache
def _text_rows() -> tuple[tuple[dict, Needs, Device], ...]:
    """Each text-generation row with the model's needs at its request shape and its
    device."""
    found = []
    for r in performance_data()["records"]:
        model = ModelEntry(
            name="m",
            architecture=r["model"],
            dtype=r["dtype"],
            prompt_tokens=r["prompt_tokens"] or UNSTATED_PROMPT_TOKENS,
            output_tokens=int(r["output_tokens"]),
            concurrency=r["concurrency"],
        )
        dev = device(instance_spec(r["instance_type"]))
        assert dev is not None
        found.append((r, resolve(model, Catalog("check", (model,))), dev))
    return tuple(found)


def _fits_neuron(row: tuple[dict, Needs, Device]) -> bool:
    """A row :data:`fm_platform.fleet.sizing.decode_step.NEURON` is fitted on: a dense model on
    a Neuron device, with its time per output token."""
    r, needs, dev = row
    return for_device(dev) is NEURON and not needs.experts and r["tpot_ms"] is not None


def neuron_points(without: int | None = None) -> tuple[DecodePoint, ...]:
    """The rows the Neuron step constants are fitted on, as decode points; ``without``:
    leave out the text-generation row of that index."""
    return tuple(
        DecodePoint(
            needs.decode_step_bytes(r["tensor_parallel"], r["concurrency"]),
            r["tensor_parallel"],
            dev.bandwidth_gbps,
            r["concurrency"],
            r["tpot_ms"],
        )
        for i, (r, needs, dev) in enumerate(_text_rows())
        if i != without and _fits_neuron((r, needs, dev))
    )


def _text_check(row: tuple[dict, Needs, Device], step: DecodeConstants | None = None) -> Check:
    r, needs, dev = row
    perf = decode_estimate(needs, dev, r["tensor_parallel"], r["concurrency"], step)
    label = f"{r['model']} {r['instance_type']} tp{r['tensor_parallel']} c{r['concurrency']}"
    return Check("text-generation", label, r["rpm"], perf.rpm)


def checks() -> tuple[Check, ...]:
    """Every shipped row with the uncalibrated estimate for it."""
    found = [_text_check(row) for row in _text_rows()]
    for r in performance_data().get("image_records", []):
        model = ModelEntry(name="m", architecture=r["model"], steps=r["steps"])
        needs = resolve(model, Catalog("check", (model,)))
        dev = device(instance_spec(r["instance_type"]))
        assert dev is not None
        flops = r["tensor_parallel"] * dev.tflops_for(needs.dtype) * 1e12 * COMPUTE_EFFICIENCY
        perf = encode_estimate(needs, flops, dev.model, dev.bandwidth_gbps)
        label = f"{r['model']} {r['instance_type']} {r['steps']} steps"
        found.append(Check("image-generation", label, 60 / r["latency_s"], perf.rpm))
    for r in performance_data().get("encoder_records", []):
        model = ModelEntry(
            name="m", architecture=r["model"], dtype=r["dtype"], prompt_tokens=r["prompt_tokens"]
        )
        needs = resolve(model, Catalog("check", (model,)))
        flops = _encoder_flops(instance_spec(r["instance_type"]), r["devices"], needs.dtype)
        label = f"{r['model']} {r['instance_type']} {r['prompt_tokens']} tokens"
        found.append(
            Check("encoder", label, 60 * r["requests_per_s"], 60 * flops / needs.request_flops)
        )
    for r in speech_rows():
        label = f"{r['model']} {r['instance_type']} {r['dtype']} {r['audio_seconds']:g} s"
        found.append(Check(SPEECH, label, 60 / r["latency_s"], speech_row_rpm(r)))
    return tuple(found)


@dataclass(frozen=True)
class LeaveOneOut:
    """Errors (percent) of the calibrated estimate on each held-out row, and of the
    uncalibrated estimate; ``by_task``: rows and median calibrated error per task."""

    rows: int
    median_pct: float
    worst_pct: float
    raw_median_pct: float
    raw_worst_pct: float
    by_task: tuple[tuple[str, int, float], ...]


def _refitted(without: int, shipped: tuple[Check, ...]) -> tuple[Check, ...]:
    """The checks with the Neuron step constants fitted without text row ``without``."""
    step = fit(neuron_points(without))
    text = _text_rows()
    return tuple(
        _text_check(text[i], step) if i < len(text) and for_device(text[i][2]) is NEURON else c
        for i, c in enumerate(shipped)
    )


def leave_one_out() -> LeaveOneOut:
    """Hold out each row, calibrate on the rest of its task, and measure the error. A row
    the Neuron step constants are fitted on is estimated, and the others calibrated, with
    constants fitted without it."""
    shipped = checks()
    text = _text_rows()
    errors, raw = [], []
    for i in range(len(shipped)):
        fitted_on = i < len(text) and _fits_neuron(text[i])
        all_checks = _refitted(i, shipped) if fitted_on else shipped
        held = all_checks[i]
        others = [
            c.measured_rpm / c.estimated_rpm
            for j, c in enumerate(all_checks)
            if j != i and c.task == held.task
        ]
        factor = statistics.median(others) if others else 1.0
        errors.append(abs(held.estimated_rpm * factor - held.measured_rpm) / held.measured_rpm)
        raw.append(abs(held.estimated_rpm - held.measured_rpm) / held.measured_rpm)
    per_task: dict[str, list[float]] = {}
    for error, check in zip(errors, shipped, strict=True):
        per_task.setdefault(check.task, []).append(error)
    by_task = tuple(
        (task, len(found), 100 * statistics.median(found))
        for task, found in sorted(per_task.items())
    )
    return LeaveOneOut(
        len(all_checks),
        100 * statistics.median(errors),
        100 * max(errors),
        100 * statistics.median(raw),
        100 * max(raw),
        by_task,
    )
