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

import math
from collections.abc import Iterable

from fm_platform.fleet.deciding.options import Shape
from fm_platform.hardware.instances import InstanceSpec


def capacity(spec: InstanceSpec) -> tuple[float, float, float]:
    """One instance's (accelerators, memory MiB, vCPUs)."""
    return (float(spec.accelerator_count), float(spec.memory_mib), float(spec.vcpus))


def _has_room(room: list[float], vector: tuple[float, float, float]) -> bool:
    """Whether an instance with ``room`` left holds a copy of ``vector`` in every dimension."""
    return all(v <= r + 1e-9 for v, r in zip(vector, room, strict=True))


def _first_fit(free: list[list[float]], vector: tuple[float, float, float], start: int) -> int:
    """The index of the first instance from ``start`` on with room for ``vector``,
    ``len(free)`` when none has."""
    for index in range(start, len(free)):
        if _has_room(free[index], vector):
            return index
    return len(free)


def _new_instances(
    cap: tuple[float, float, float], vector: tuple[float, float, float], count: int
) -> list[list[float]]:
    """The room left on each instance opened for ``count`` copies of ``vector`` that no
    open instance has room for: each takes copies while it has room, so all but the last
    are alike (filled once here)."""
    fills = [[c - v for c, v in zip(cap, vector, strict=True)]]
    while len(fills) < count and _has_room(fills[-1], vector):
        fills.append([r - v for r, v in zip(fills[-1], vector, strict=True)])
    full, rest = divmod(count, len(fills))
    return [list(fills[-1]) for _ in range(full)] + ([fills[rest - 1]] if rest else [])


def instances_needed(copies: Iterable[tuple[Shape, int]], spec: InstanceSpec) -> int:
    """How many ``spec`` instances hold ``count`` copies of each shape (FFD, dominant share).

    Copies of one vector come one after another in that order, and an instance that had
    no room for a copy has none for the next alike (rooms only shrink): the search for
    the next starts where the previous one went, and once no open instance has room the
    rest open new instances (:func:`_new_instances`)."""
    cap = capacity(spec)
    runs = []
    for shape, count in copies:
        vector = (float(shape.accelerators), float(shape.memory_mib), float(shape.cpu_cores))
        share = max(v / c for v, c in zip(vector, cap, strict=True) if c)
        if count > 0:
            runs.append((share, vector, count))
    runs.sort(key=lambda run: -run[0])
    # An instance without room for the smallest copy's accelerators takes no more copies:
    # it leaves the list searched, which keeps the search short for accelerated copies.
    least = min((vector[0] for _, vector, _ in runs), default=0.0)
    done = least - 1e-9 if least > 0 else -math.inf
    opened = 0
    free: list[list[float]] = []
    previous, start = None, 0
    for _, vector, count in runs:
        if vector != previous:
            previous, start = vector, 0
        while count:
            start = _first_fit(free, vector, start)
            if start == len(free):
                rooms = _new_instances(cap, vector, count)
                opened += len(rooms)
                free.extend(room for room in rooms if room[0] >= done)
                break
            room = free[start]
            for i, v in enumerate(vector):
                room[i] -= v
            if room[0] < done:
                del free[start]
            count -= 1
    return opened
