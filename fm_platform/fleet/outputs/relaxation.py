"""The cost bound's linear program (:mod:`fm_platform.fleet.outputs.bound`) as arrays, the exact
reductions that shrink it and its solution with HiGHS. Needs numpy and highspy (the
``bound`` extra).

The program: per class of alike models (``count`` of them), a column for its cheapest
option of one model per endpoint at cost ``alone`` (``inf`` when it has none) and a column
per multi-model option on a pooled type, which takes ``memory`` (share of the memory that
holds models) and ``traffic`` (active share of peak copies) of that type's instances; per
pooled type its instances at ``price``, at least the memory and the traffic of the
columns on it. Each class's columns sum to its count.

Exact reductions (each keeps the optimum; ``tests/test_fleet_reference.py`` compares):

- a dominated type (:func:`without_dominated_types`): type ``t``'s columns go when another
  type ``u`` kept has a column for every class on ``t`` using at most ``r`` times its
  memory and traffic there, with ``r x price(u) <= price(t)``: moving every share on ``t``
  to ``u`` raises ``u``'s instances by at most ``r`` times ``t``'s, which cost no more;
- alike classes (:func:`merged`): classes left with the same columns are one, their
  counts summed;
- a class with no multi-model column is a constant, ``count x alone``.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from fm_platform.fleet.deciding.options import Option


@dataclass(frozen=True)
class Program:
    """Per class ``counts`` and ``alone``; per pooled type ``prices``; per multi-model
    column its class ``cls``, type ``typ``, ``memory`` and ``traffic``."""

    counts: np.ndarray
    alone: np.ndarray
    prices: np.ndarray
    cls: np.ndarray
    typ: np.ndarray
    memory: np.ndarray
    traffic: np.ndarray

    def reduced_optimum(self) -> float:
        """:func:`optimum` after the exact reductions (module docstring)."""
        return optimum(merged(without_dominated_types(self)))

    def keeping(self, columns: np.ndarray) -> Program:
        """The program with only the multi-model ``columns`` (a mask) left."""
        return Program(
            self.counts,
            self.alone,
            self.prices,
            self.cls[columns],
            self.typ[columns],
            self.memory[columns],
            self.traffic[columns],
        )


class Columns:
    """A :class:`Program` built class by class (:meth:`add`); classes with the same
    columns are merged, their counts summed."""

    def __init__(self) -> None:
        self._classes: dict[tuple, list] = {}
        self._types: dict[str, int] = {}
        self._prices: list[float] = []
        self._arrays: dict[int, tuple[np.ndarray, ...]] = {}

    def add(
        self,
        count: int,
        alone: float,
        pooled: list[list[Option]],
        idle_free: list[list[Option]],
        a: float,
        peak_rpm: float,
    ) -> None:
        """``count`` models whose cheapest option of one model per endpoint costs
        ``alone``, or less on one of ``idle_free``'s options, each costing ``a`` (active
        share of the day) x its copies at ``peak_rpm``; with a column per option of
        ``pooled`` (multi-model) at that traffic."""
        lists = (tuple(map(id, pooled)), tuple(map(id, idle_free)))
        key = (alone, *lists, a, peak_rpm) if pooled or idle_free else (alone,)
        entry = self._classes.get(key)
        if entry is None:
            self._classes[key] = [count, alone, pooled, idle_free, a, peak_rpm]
        else:
            entry[0] += count

    def _of(self, options: list[Option]) -> tuple[np.ndarray, ...]:
        """Multi-model options' types, memory shares and requests per minute."""
        found = self._arrays.get(id(options))
        if found is None:
            for o in options:
                if o.instance_type not in self._types:
                    self._types[o.instance_type] = len(self._prices)
                    self._prices.append(o.price)
            rows = [(self._types[o.instance_type], o.copy_gib / o.usable_gib) for o in options]
            table = np.array(rows, dtype=np.float64).reshape(-1, 2).T
            rpm = np.array([o.perf.rpm for o in options], dtype=np.float64)
            found = self._arrays[id(options)] = (table[0].astype(np.int64), table[1], rpm)
        return found

    def _peak_copies(self) -> dict[tuple[int, float], float]:
        """Per idle-free options list and peak rpm, the least price of the copies at
        peak (at least one), all of a list's peaks at once: ``a`` x this is the list's
        least expected cost (:meth:`~fm_platform.fleet.deciding.options.Option.hourly_at` with no
        copy while idle)."""
        peaks: dict[int, tuple[list[Option], set[float]]] = {}
        for _, _, _, idle_free, _, peak in self._classes.values():
            for options in idle_free:
                peaks.setdefault(id(options), (options, set()))[1].add(peak)
        found: dict[tuple[int, float], float] = {}
        for key, (options, wanted) in peaks.items():
            rpm, hourly = np.array([(o.perf.rpm, o.copy_hourly) for o in options]).T
            at = np.array(sorted(wanted))
            copies = np.maximum(1.0, np.ceil(at[:, None] / rpm[None, :]))
            least = (hourly[None, :] * copies).min(axis=1)
            found.update(zip(((key, float(p)) for p in at), least.tolist(), strict=True))
        return found

    def program(self) -> Program:
        """The program of the classes added."""
        peak_copies = self._peak_copies()
        classes = list(self._classes.values())
        alone = np.empty(len(classes))
        cls, typ, memory, traffic = [], [], [], []
        for i, (_, cheapest, pooled, idle_free, a, peak) in enumerate(classes):
            for options in idle_free:
                cheapest = min(cheapest, a * peak_copies[id(options), peak])
            alone[i] = cheapest
            for options in pooled:
                kinds, share, rpm = self._of(options)
                cls.append(np.full(len(kinds), i))
                typ.append(kinds)
                memory.append(share)
                traffic.append(a * (peak / rpm))
        none = np.zeros(0)
        return Program(
            counts=np.array([c[0] for c in classes], dtype=np.float64),
            alone=alone,
            prices=np.array(self._prices, dtype=np.float64),
            cls=np.concatenate(cls or [none]).astype(np.int64),
            typ=np.concatenate(typ or [none]).astype(np.int64),
            memory=np.concatenate(memory or [none]),
            traffic=np.concatenate(traffic or [none]),
        )


def _ratios(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """Per column of ``new`` (classes x types), the largest ``new / old`` down its rows
    (``old`` one column): 0 where both are 0, ``inf`` where only ``old`` is 0."""
    scaled = np.divide(new, old[:, None], out=np.zeros_like(new), where=old[:, None] > 0)
    scaled[(old[:, None] == 0) & (new > 0)] = np.inf
    return scaled.max(axis=0, initial=0.0)


def without_dominated_types(p: Program) -> Program:
    """``p`` without the columns of dominated types (module docstring), the dearest tried
    first against the types still kept. A type with two columns of one class is neither
    dropped nor used to drop another."""
    coupled, row = np.unique(p.cls, return_inverse=True)  # the classes with such columns
    pooled, col = np.unique(p.typ, return_inverse=True)  # the types with such columns
    k, t = len(coupled), len(pooled)
    cell = row * t + col
    per_cell = np.bincount(cell, minlength=k * t).reshape(k, t)
    single: np.ndarray = per_cell.max(axis=0, initial=0) <= 1
    has = np.zeros((k, t), dtype=bool)
    has.flat[cell] = True
    memory, traffic = np.zeros((k, t)), np.zeros((k, t))
    memory.flat[cell] = p.memory
    traffic.flat[cell] = p.traffic
    prices = p.prices[pooled]
    kept = np.ones(t, dtype=bool)
    for old in np.argsort(-prices, kind="stable"):
        if not single[old]:
            continue
        rows = has[:, old]
        covers = kept & single & has[rows].all(axis=0)
        covers[old] = False
        if not covers.any():
            continue
        r = np.maximum(
            _ratios(memory[rows][:, covers], memory[rows, old]),
            _ratios(traffic[rows][:, covers], traffic[rows, old]),
        )
        if np.any(r * prices[covers] <= prices[old]):
            kept[old] = False
    return p.keeping(kept[col])


def merged(p: Program) -> Program:
    """``p`` with the classes of the same columns as one, their counts summed: any
    solution of their rows sums to one of the merged row, which splits back evenly at the
    same cost."""
    if not len(p.cls):
        return p
    order = np.lexsort((p.typ, p.cls))  # each class's columns together, by type
    cls, typ, memory, traffic = p.cls[order], p.typ[order], p.memory[order], p.traffic[order]
    edges = np.flatnonzero(np.r_[True, cls[1:] != cls[:-1], True])
    alone = np.ones(len(p.counts), dtype=bool)
    alone[cls] = False
    classes: dict[tuple, int] = {}
    counts, costs, kept = list(p.counts[alone]), list(p.alone[alone]), []
    for start, end in zip(edges[:-1], edges[1:], strict=False):
        c = cls[start]
        key = (p.alone[c], *(a[start:end].tobytes() for a in (typ, memory, traffic)))
        i = classes.get(key)
        if i is None:
            i = classes[key] = len(counts)
            counts.append(0.0)
            costs.append(p.alone[c])
            kept.append((start, end, i))
        counts[i] += p.counts[c]
    columns = np.concatenate([np.arange(a, b) for a, b, _ in kept] or [np.zeros(0, np.int64)])
    rows = np.concatenate([np.full(b - a, i) for a, b, i in kept] or [np.zeros(0, np.int64)])
    return Program(
        np.array(counts),
        np.array(costs),
        p.prices,
        rows,
        *(a[columns] for a in (typ, memory, traffic)),
    )


def optimum(p: Program) -> float:
    """The program's least cost: the classes without multi-model columns as constants,
    the others solved by HiGHS's dual simplex (its default) without presolve: on 50,000
    realistic models (scripts/bench_fleet.py) presolve took half as long again, the
    interior-point method 7x and the primal simplex 15x, for the same optimum."""
    coupled = np.zeros(len(p.counts), dtype=bool)
    coupled[p.cls] = True
    constant = float(np.sum(p.counts[~coupled] * p.alone[~coupled]))
    if not coupled.any():
        return constant
    row = np.cumsum(coupled) - 1  # class -> its row
    types = np.unique(p.typ)
    slot = np.zeros(len(p.prices), dtype=np.int64)
    slot[types] = np.arange(len(types))
    k, t = int(coupled.sum()), len(types)
    alone = np.flatnonzero(coupled & np.isfinite(p.alone))
    n, a = len(p.cls), len(alone)
    memory_row, traffic_row = k + slot[p.typ], k + t + slot[p.typ]
    index = np.concatenate(
        [
            np.stack([k + np.arange(t), k + t + np.arange(t)], axis=1).ravel(),
            row[alone],
            np.stack([row[p.cls], memory_row, traffic_row], axis=1).ravel(),
        ]
    )
    values = np.concatenate(
        [np.ones(2 * t), np.ones(a), np.stack([np.ones(n), -p.memory, -p.traffic], 1).ravel()]
    )
    starts = np.concatenate(
        [np.arange(0, 2 * t, 2), 2 * t + np.arange(a), 2 * t + a + np.arange(0, 3 * n + 1, 3)]
    )
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = t + a + n, k + 2 * t
    lp.col_cost_ = np.concatenate([p.prices[types], p.alone[alone], np.zeros(n)])
    lp.col_lower_ = np.zeros(lp.num_col_)
    lp.col_upper_ = np.full(lp.num_col_, inf)
    counts = p.counts[coupled]
    lp.row_lower_ = np.concatenate([counts, np.zeros(2 * t)])
    lp.row_upper_ = np.concatenate([counts, np.full(2 * t, inf)])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = starts.astype(np.int32)
    lp.a_matrix_.index_ = index.astype(np.int32)
    lp.a_matrix_.value_ = values
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.passModel(lp)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS: {h.modelStatusToString(h.getModelStatus())}")
    return constant + float(h.getInfo().objective_function_value)
