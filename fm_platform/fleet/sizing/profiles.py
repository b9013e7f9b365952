"""Measured throughput and latency of one model copy: the shipped performance profiles
(``data/performance.json``, every record citing its published source) and a catalog entry's
own benchmark results file.

The benchmark format read first is the foundation-model-benchmarking-tool's (FMBench)
summary of all metrics (``all_metrics_summary.csv``, written by its
``5_model_metric_analysis`` notebook from the per-run ``all_metrics.csv``): one row per
experiment, payload file, instance type, instance count and concurrency, with
``latency_p50`` (seconds), ``TTFT_p50`` and ``TPOT_p50`` (seconds; absent when the run did
not stream), ``completion_token_count_mean``, ``prompt_token_count_mean`` and
``transactions_per_minute`` over all instances. FMBench deploys one model per instance with
all its accelerators, so a row's copy is the whole instance.

Two more formats are read by their shape (:func:`read_benchmark`):

- a plain CSV with the columns ``model, instance_type, tensor_parallel, concurrency, rpm,
  p50_ms`` (optionally ``output_tokens``): one copy of ``tensor_parallel`` devices
  sustaining ``rpm`` requests per minute at ``concurrency``, median latency ``p50_ms``;
  ``benchmark_experiment`` picks the rows of one ``model`` value;
- a SageMaker Inference Recommender job's result (a ``.json`` file: the
  ``DescribeInferenceRecommendationsJob`` response, or its ``InferenceRecommendations``
  list): per recommendation, ``EndpointConfiguration.InstanceType`` and
  ``Metrics.MaxInvocations`` (invocations per minute one instance sustains) at
  ``Metrics.ModelLatency`` (ms), read as a whole-instance copy at concurrency 1.

A row without output tokens is taken at the model's own request shape (no conversion).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fm_platform.fleet.sizing.measured import performance_data
from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec

FMBENCH_COLUMNS = (
    "instance_type",
    "instance_count",
    "concurrency",
    "latency_p50",
    "completion_token_count_mean",
    "transactions_per_minute",
)


@dataclass(frozen=True)
class Record:
    """One measured point: a copy of ``tensor_parallel`` devices of ``instance_type`` at
    ``concurrency`` concurrent requests sustains ``rpm`` requests per minute of
    ``output_tokens`` tokens, with per-token latency ``tpot_ms`` and median request latency
    ``latency_p50_ms``; ``source`` says where it was published."""

    instance_type: str
    tensor_parallel: int
    concurrency: int
    rpm: float
    output_tokens: float
    prompt_tokens: float | None
    tpot_ms: float | None
    ttft_ms: float | None
    latency_p50_ms: float
    source: str


@cache
def _shipped() -> dict[tuple[str, str, int], tuple[Record, ...]]:
    data = performance_data()
    grouped: dict[tuple[str, str, int], list[Record]] = defaultdict(list)
    for r in data["records"]:
        source = data["sources"][r["source"]]
        if not source["served"]:
            continue  # measured in the model library: checks the estimate, sizes nothing
        grouped[(r["model"], r["instance_type"], r["tensor_parallel"])].append(
            Record(
                instance_type=r["instance_type"],
                tensor_parallel=r["tensor_parallel"],
                concurrency=r["concurrency"],
                rpm=r["rpm"],
                output_tokens=r["output_tokens"],
                prompt_tokens=r["prompt_tokens"],
                tpot_ms=r["tpot_ms"],
                ttft_ms=r["ttft_ms"],
                latency_p50_ms=r["latency_p50_ms"],
                source=f"{source['repo']}@{source['commit'][:12]} {r['row']}",
            )
        )
    return {key: tuple(sorted(v, key=lambda r: r.concurrency)) for key, v in grouped.items()}


def measured_as(architecture: str) -> str:
    """The architecture whose rows ``architecture`` is sized from: itself, or the one
    ``measured_as`` in ``data/performance.json`` names (a fine-tune or distill with the
    same layers, heads, hidden size, vocabulary and, within 1%, parameters)."""
    return performance_data()["measured_as"].get(architecture, architecture)


@cache
def checked_concurrency() -> int:
    """The most concurrent sequences of any shipped text-generation row: the estimate is
    checked against rows up to it (:mod:`fm_platform.fleet.sizing.accuracy`)."""
    return max(r["concurrency"] for r in performance_data()["records"])


def shipped_records(architecture: str, instance_type: str, tensor_parallel: int) -> tuple:
    """The shipped records of an architecture (or the one it is measured as) on a type at a
    tensor-parallel degree, from sources that measured a model server (``served``): a
    library's static batches (the Neuron SDK's, batch 1 of the Qwen2.5 speed benchmark)
    say nothing of a served copy's concurrency and only check the estimate."""
    return _shipped().get((measured_as(architecture), instance_type, tensor_parallel), ())


def _number(row: dict[str, str], column: str) -> float | None:
    value = (row.get(column) or "").strip()
    return float(value) if value not in ("", "nan", "NaN") else None


PLAIN_COLUMNS = ("model", "instance_type", "tensor_parallel", "concurrency", "rpm", "p50_ms")


def _spec_of(path: Path, where: str, instance_type: str):
    try:
        return instance_spec(instance_type)
    except UnknownInstanceTypeError:
        raise ValueError(
            f"benchmark file {path} {where}: unknown instance type {instance_type!r}"
        ) from None


def read_plain(path: Path, model: str | None = None) -> tuple[Record, ...]:
    """The rows of a plain measurements CSV (of ``model`` when given); ``ValueError``
    naming the file and what is wrong."""
    try:
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise ValueError(f"cannot read benchmark file {path}: {error.strerror}") from None
    records = []
    for number, row in enumerate(rows, start=2):
        if model is not None and row["model"].strip() != model:
            continue
        instance_type = row["instance_type"].strip()
        _spec_of(path, f"line {number}", instance_type)
        records.append(
            Record(
                instance_type=instance_type,
                tensor_parallel=int(_number(row, "tensor_parallel") or 1),
                concurrency=int(_number(row, "concurrency") or 1),
                rpm=_number(row, "rpm") or 0.0,
                output_tokens=_number(row, "output_tokens") or 0.0,
                prompt_tokens=None,
                tpot_ms=None,
                ttft_ms=None,
                latency_p50_ms=_number(row, "p50_ms") or 0.0,
                source=f"{path.name} line {number}",
            )
        )
    return tuple(records)


def read_recommender(path: Path) -> tuple[Record, ...]:
    """The recommendations of an Inference Recommender job's result file."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read recommender result {path}: {error}") from None
    items = data.get("InferenceRecommendations", []) if isinstance(data, dict) else data
    records = []
    for i, item in enumerate(items):
        where = f"InferenceRecommendations[{i}]"
        try:
            instance_type = item["EndpointConfiguration"]["InstanceType"]
            metrics = item["Metrics"]
            rpm, latency = float(metrics["MaxInvocations"]), float(metrics["ModelLatency"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(
                f"recommender result {path} {where}: needs EndpointConfiguration.InstanceType "
                "and Metrics.MaxInvocations, Metrics.ModelLatency"
            ) from None
        spec = _spec_of(path, where, instance_type)
        records.append(
            Record(
                instance_type=instance_type,
                tensor_parallel=max(1, spec.accelerator_count),
                concurrency=1,
                rpm=rpm,
                output_tokens=0.0,
                prompt_tokens=None,
                tpot_ms=None,
                ttft_ms=None,
                latency_p50_ms=latency,
                source=f"{path.name} {where}",
            )
        )
    return tuple(records)


@cache
def read_benchmark(path: Path, experiment: str | None = None) -> tuple[Record, ...]:
    """The records of a benchmark file in any of the three formats (module docstring)."""
    if path.suffix == ".json":
        records = read_recommender(path)
    else:
        try:
            with path.open(newline="") as handle:
                header = next(csv.reader(handle), [])
        except OSError as error:
            raise ValueError(f"cannot read benchmark file {path}: {error.strerror}") from None
        if all(c in header for c in PLAIN_COLUMNS):
            records = read_plain(path, experiment)
        else:
            return read_fmbench(path, experiment)
    if not records:
        which = f" for model {experiment!r}" if experiment else ""
        raise ValueError(f"benchmark file {path} has no rows{which}")
    return tuple(sorted(records, key=lambda r: (r.instance_type, r.concurrency)))


@cache
def read_fmbench(path: Path, experiment: str | None = None) -> tuple[Record, ...]:
    """The rows of an FMBench summary CSV (of ``experiment`` when given) as records of a
    whole-instance copy, per instance. Raises ``ValueError`` naming the file and what is
    wrong (unreadable, missing columns, unknown instance type, no rows)."""
    try:
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise ValueError(f"cannot read benchmark file {path}: {error.strerror}") from None
    missing = [c for c in FMBENCH_COLUMNS if rows and c not in rows[0]]
    if missing:
        raise ValueError(
            f"benchmark file {path} is not an FMBench metrics summary: no column "
            + ", ".join(missing)
        )
    records = []
    for number, row in enumerate(rows, start=2):
        if experiment is not None and row.get("experiment_name") != experiment:
            continue
        instance_type = row["instance_type"].strip()
        try:
            spec = instance_spec(instance_type)
        except UnknownInstanceTypeError:
            raise ValueError(
                f"benchmark file {path} line {number}: unknown instance type {instance_type!r}"
            ) from None
        count = _number(row, "instance_count") or 1.0
        tpot, ttft = _number(row, "TPOT_p50"), _number(row, "TTFT_p50")
        records.append(
            Record(
                instance_type=instance_type,
                tensor_parallel=max(1, spec.accelerator_count),
                concurrency=int(_number(row, "concurrency") or 1),
                rpm=(_number(row, "transactions_per_minute") or 0.0) / count,
                output_tokens=_number(row, "completion_token_count_mean") or 0.0,
                prompt_tokens=_number(row, "prompt_token_count_mean"),
                tpot_ms=tpot * 1000 if tpot is not None else None,
                ttft_ms=ttft * 1000 if ttft is not None else None,
                latency_p50_ms=(_number(row, "latency_p50") or 0.0) * 1000,
                source=f"{path.name} line {number}",
            )
        )
    if not records:
        which = f" for experiment {experiment!r}" if experiment else ""
        raise ValueError(f"benchmark file {path} has no rows{which}")
    return tuple(sorted(records, key=lambda r: (r.instance_type, r.concurrency)))
