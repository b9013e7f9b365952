"""What one decode step of a text-generation copy costs, per device family.

A step reads the weights its tokens pass through and the running sequences' KV cache,
so it takes

    step = bytes read / (devices x bandwidth x efficiency) + step_ms
           + per_doubling_ms x log2(devices) + per_sequence_ms x concurrency / devices

``per_sequence_ms`` is device time each running sequence adds to a step, shared by the
copy's devices. GPUs (:data:`GPU`) keep the estimator's first figures: 75% of the
bandwidth, 3 ms of scheduling and kernel launches and 4 ms per doubling of tensor
parallelism for its all-reduces. Neuron devices (:data:`NEURON`: Inferentia2, Trainium,
Trainium2) are fitted by :func:`fit` on the measured rows of dense models on Inferentia2
(``data/performance.json``; :func:`fm_platform.fleet.sizing.accuracy.neuron_points`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fm_platform.hardware.devices import Device


@dataclass(frozen=True)
class DecodeConstants:
    """The constants of the step rule (module docstring); ``fitted``: the rows they were
    fitted on (empty: not fitted)."""

    efficiency: float
    step_ms: float
    per_doubling_ms: float
    per_sequence_ms: float
    fitted: str

    def step(
        self, moved_bytes: float, devices: int, bandwidth_gbps: float, concurrency: int
    ) -> float:
        """One step in ms: ``moved_bytes`` read over ``devices`` at ``bandwidth_gbps``
        each, ``concurrency`` sequences running."""
        read_ms = moved_bytes / (devices * bandwidth_gbps * 1e9 * self.efficiency) * 1000
        return (
            read_ms
            + self.step_ms
            + self.per_doubling_ms * math.log2(devices)
            + self.per_sequence_ms * concurrency / devices
        )


GPU = DecodeConstants(0.75, 3.0, 4.0, 0.0, "")
#: Least squares (relative error) over the 32 rows of dense models on Inferentia2
#: (performance.json: the Neuron SDK's Llama-2 7B/13B/70B, Llama-3-70B and Mistral-7B at
#: TP 24 over 12 devices, batch 1-8, and TGI neuronx's Llama-3-8B on one device,
#: concurrency 1-8): 49% of the bandwidth, 3.7 ms a step and 6.8 ms of device time per
#: running sequence; per-token time within 4.5% at the median, 25% at worst. A term per
#: doubling of tensor parallelism fits at 0.25 ms on the same rows, so there is none: the
#: GPU's 4 ms per doubling put 14 ms of all-reduce on a TP-24 step that takes 6.5 ms in
#: all (Llama-2-7B, batch 1). tests/test_fleet_decode_step.py refits them.
NEURON = DecodeConstants(0.49, 3.7, 0.0, 6.8, "fitted on 32 measured Inferentia2 rows")


def for_device(dev: Device) -> DecodeConstants:
    """:data:`NEURON` for a Neuron device (no CUDA compute capability), :data:`GPU`
    otherwise."""
    return NEURON if dev.capability is None else GPU


@dataclass(frozen=True)
class DecodePoint:
    """One measured step: ``tpot_ms`` of a copy on ``devices`` of ``bandwidth_gbps`` that
    reads ``moved_bytes`` a step with ``concurrency`` sequences running."""

    moved_bytes: float
    devices: int
    bandwidth_gbps: float
    concurrency: int
    tpot_ms: float


def _full_bandwidth_ms(p: DecodePoint) -> float:
    """The ms a point's step takes to read its bytes at all of its devices' bandwidth."""
    return p.moved_bytes / (p.devices * p.bandwidth_gbps * 1e9) * 1000


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting on a small square system."""
    n = len(vector)
    rows = [[*matrix[i], vector[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    solution = [0.0] * n
    for r in reversed(range(n)):
        known = sum(rows[r][c] * solution[c] for c in range(r + 1, n))
        solution[r] = (rows[r][n] - known) / rows[r][r]
    return solution


def fit(points: Sequence[DecodePoint], fitted: str = "refitted") -> DecodeConstants:
    """The efficiency, step and per-sequence time (no per-doubling term) that minimise the
    squared relative error of the step rule over ``points``."""
    features = [(_full_bandwidth_ms(p), 1.0, p.concurrency / p.devices) for p in points]
    # each row divided by its measurement: least squares on the relative error
    scaled = [[x / p.tpot_ms for x in f] for f, p in zip(features, points, strict=True)]
    normal = [[sum(row[i] * row[j] for row in scaled) for j in range(3)] for i in range(3)]
    target = [sum(row[i] for row in scaled) for i in range(3)]
    inverse_efficiency, step_ms, per_sequence_ms = _solve(normal, target)
    return DecodeConstants(1 / inverse_efficiency, step_ms, 0.0, per_sequence_ms, fitted)
