"""How far the throughput estimate is from the measured rows the package ships
(``data/performance.json``): each row is held out in turn, the estimate is calibrated on
the others (the median ratio of measured to estimated throughput of its task) and
compared with the held-out row. ``make bench`` prints the median and worst error.

Text generation rows: the decode estimate of :mod:`fm_platform.fleet.performance` at the
row's concurrency, prompt and output tokens (500 prompt tokens where the source states
none). Image rows: the compute-bound estimate of one image at the row's steps
(:mod:`fm_platform.fleet.diffusion`) at the uncalibrated 40% of the devices' 16-bit rate,
so that the held-out row takes no part in its own calibration. Encoder rows (a model library's
runs, or a server's batched requests): the compute time of one sequence at the row's
tokens on the row's devices (or, for a CPU type, its vCPUs), without the per-request
serving overhead, against the measured sequences per second.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import cache
from importlib import resources

from fm_platform.fleet.catalog import Catalog, ModelEntry
from fm_platform.fleet.performance import (
    COMPUTE_EFFICIENCY,
    cpu_flops,
    decode_estimate,
    encode_estimate,
)
from fm_platform.fleet.sizing import resolve
from fm_platform.hardware.devices import device
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


@cache
def _data() -> dict:
    text = resources.files("fm_platform.fleet").joinpath("data/performance.json").read_text()
    return json.loads(text)


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


def checks() -> tuple[Check, ...]:
    """Every shipped row with the uncalibrated estimate for it."""
    found = []
    for r in _data()["records"]:
        model = ModelEntry(
            name="m",
            architecture=r["model"],
            dtype=r["dtype"],
            prompt_tokens=r["prompt_tokens"] or UNSTATED_PROMPT_TOKENS,
            output_tokens=int(r["output_tokens"]),
            concurrency=r["concurrency"],
        )
        needs = resolve(model, Catalog("check", (model,)))
        dev = device(instance_spec(r["instance_type"]))
        assert dev is not None
        perf = decode_estimate(needs, dev, r["tensor_parallel"], r["concurrency"])
        label = f"{r['model']} {r['instance_type']} tp{r['tensor_parallel']} c{r['concurrency']}"
        found.append(Check("text-generation", label, r["rpm"], perf.rpm))
    for r in _data().get("image_records", []):
        model = ModelEntry(name="m", architecture=r["model"], steps=r["steps"])
        needs = resolve(model, Catalog("check", (model,)))
        dev = device(instance_spec(r["instance_type"]))
        assert dev is not None
        flops = r["tensor_parallel"] * dev.tflops_for(needs.dtype) * 1e12 * COMPUTE_EFFICIENCY
        perf = encode_estimate(needs, flops, dev.model, dev.bandwidth_gbps)
        label = f"{r['model']} {r['instance_type']} {r['steps']} steps"
        found.append(Check("image-generation", label, 60 / r["latency_s"], perf.rpm))
    for r in _data().get("encoder_records", []):
        model = ModelEntry(
            name="m", architecture=r["model"], dtype=r["dtype"], prompt_tokens=r["prompt_tokens"]
        )
        needs = resolve(model, Catalog("check", (model,)))
        flops = _encoder_flops(instance_spec(r["instance_type"]), r["devices"], needs.dtype)
        label = f"{r['model']} {r['instance_type']} {r['prompt_tokens']} tokens"
        found.append(
            Check("encoder", label, 60 * r["requests_per_s"], 60 * flops / needs.request_flops)
        )
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


def leave_one_out() -> LeaveOneOut:
    """Hold out each row, calibrate on the rest of its task, and measure the error."""
    all_checks = checks()
    errors, raw = [], []
    for i, held in enumerate(all_checks):
        others = [
            c.measured_rpm / c.estimated_rpm
            for j, c in enumerate(all_checks)
            if j != i and c.task == held.task
        ]
        factor = statistics.median(others) if others else 1.0
        errors.append(abs(held.estimated_rpm * factor - held.measured_rpm) / held.measured_rpm)
        raw.append(abs(held.estimated_rpm - held.measured_rpm) / held.measured_rpm)
    per_task: dict[str, list[float]] = {}
    for error, check in zip(errors, all_checks, strict=True):
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
