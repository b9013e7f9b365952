"""Vector bin packing of model copies onto instances.

Each copy is a vector (accelerators, host memory, CPU cores); each instance a bin with the
type's capacity in the same three dimensions. The heuristic is First Fit Decreasing by
dominant share: copies sorted by their largest fraction of one instance over the three
dimensions, each placed on the first instance with room in every dimension, a new instance
opened when none has. Why: on accelerated types the accelerator dimension dominates and
FFD is then the classic one-dimensional heuristic (at most 11/9 of the optimum plus one
bin); the other dimensions only break a fit when a copy asks for unusually much memory or
CPU. It is deterministic, so the same models always give the same count, and it costs
O(copies x instances).
"""

from __future__ import annotations

from collections.abc import Iterable

from fm_platform.fleet.options import Shape
from fm_platform.hardware.instances import InstanceSpec


def capacity(spec: InstanceSpec) -> tuple[float, float, float]:
    """One instance's (accelerators, memory MiB, vCPUs)."""
    return (float(spec.accelerator_count), float(spec.memory_mib), float(spec.vcpus))


def instances_needed(copies: Iterable[tuple[Shape, int]], spec: InstanceSpec) -> int:
    """How many ``spec`` instances hold ``count`` copies of each shape (FFD, dominant share)."""
    cap = capacity(spec)
    items = []
    for shape, count in copies:
        vector = (float(shape.accelerators), float(shape.memory_mib), float(shape.cpu_cores))
        share = max(v / c for v, c in zip(vector, cap, strict=True) if c)
        items.extend([(share, vector)] * count)
    items.sort(key=lambda item: -item[0])
    # An instance without room for the smallest copy's accelerators takes no more copies:
    # it leaves the list searched, which keeps the search short for accelerated copies.
    least = min((v[0] for _, v in items), default=0.0)
    opened = 0
    free: list[list[float]] = []
    for _, vector in items:
        for index, room in enumerate(free):
            if all(v <= r + 1e-9 for v, r in zip(vector, room, strict=True)):
                for i, v in enumerate(vector):
                    room[i] -= v
                if least > 0 and room[0] < least - 1e-9:
                    del free[index]
                break
        else:
            opened += 1
            room = [c - v for c, v in zip(cap, vector, strict=True)]
            if not (least > 0 and room[0] < least - 1e-9):
                free.append(room)
    return opened
