"""The options and hosting decision of each distinct entry of a catalog, on two cores when
the catalog is large.

A forked process assesses and decides the entries of about 43% of the request shapes
(entries alike but for name, traffic and hours: :func:`~fm_platform.fleet.sizing.alike_needs`)
while this process does the rest, and hands its results back as plain values
(:meth:`~fm_platform.fleet.options.AlikeOptions.handover`): pickling the objects themselves costs
more than computing them (a 50,000-model realistic catalog's results are 2.9 million
objects; half of them took 1.3 s to pickle and 1.6 s to load, against 2.6 s to compute).
The results are the same either way. One process computes everything where it cannot
fork (:func:`~fm_platform.fleet.forking.can_fork`), the entries have fewer than
:data:`SPLIT_SHAPES` request shapes, or the forked process fails.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from typing import TypeAlias

from fm_platform.fleet.catalog import ModelEntry
from fm_platform.fleet.fitness import Candidate, Decider, Decision, Scores
from fm_platform.fleet.forking import can_fork, forked
from fm_platform.fleet.options import (
    AlikeOptions,
    Assessment,
    PricedOptions,
    alike_options,
    has_alike_options,
    keep_alike_options,
    priced_assessment,
)
from fm_platform.fleet.sizing import Needs

#: Request shapes from which a second process pays for itself (forking, handing back):
#: realistic catalogs of 300, 1,000 and 50,000 models have 212, 452 and 1,993, and plan
#: in 0.31-0.49 s, 0.86-1.04 s and 8.0-8.5 s on one process, 0.29-0.31 s, 0.44-0.73 s and
#: 6.6-7.3 s on two (cold, back to back on one machine).
SPLIT_SHAPES = 200

#: An entry's needs, options and decision, or why it cannot be assessed.
Result: TypeAlias = "tuple[Needs, Assessment, Decision | None] | str"
#: Per entry number, one model of it, its needs and what models alike share of them
#: (:func:`~fm_platform.fleet.sizing.alike_needs`).
Work: TypeAlias = "dict[int, tuple[ModelEntry, Needs, Needs]]"

#: What an entry's work costs this process and the forked one (module docstring).
_COST = (1.0, 1.35)
_SCORES_FIELDS = tuple(f.name for f in dataclasses.fields(Scores))


def assess_entries(
    work: Work, region: str, decider: Decider, *, split: bool | None = None
) -> dict[int, Result]:
    """Each entry's :class:`Result`, in ``work``'s order. ``split`` asks for two processes
    (True, where ``os.fork`` exists) or one (False); by default two where they pay
    (:data:`SPLIT_SHAPES`) and may (:func:`~fm_platform.fleet.forking.can_fork`)."""
    shape_of = _shapes(work)
    (mine, theirs), shapes = _halves(shape_of, region)
    if split is None:
        split = two_processes_pay(shapes)
    if not split or not hasattr(os, "fork"):
        return _compute(work, shape_of, list(work), region, decider)
    handing = forked(lambda: _handover(_compute(work, shape_of, theirs, region, decider), theirs))
    try:
        results = _compute(work, shape_of, mine, region, decider)
    finally:
        handed = handing()  # waited for even when this half raises: no process left behind
    if handed is None:
        results.update(_compute(work, shape_of, theirs, region, decider))
    else:
        results.update(_taken_over(handed, theirs, work))
        for key in theirs:  # later planners in this process reuse what was handed over
            result = results[key]
            if not isinstance(result, str):
                keep_alike_options(shape_of[key], region, result[1].options.alike)
    return {key: results[key] for key in work}


def two_processes_pay(shapes: int) -> bool:
    """Whether work on ``shapes`` request shapes (in assessing, those not assessed yet)
    pays for a second process (:data:`SPLIT_SHAPES`) and this process may fork
    (:func:`~fm_platform.fleet.forking.can_fork`)."""
    return shapes >= SPLIT_SHAPES and can_fork()


def _shapes(work: Work) -> dict[int, Needs]:
    """Per entry, one object for its request shape: entries whose alike needs are equal
    share it (so each shape is hashed once and looked up by identity after)."""
    canonical: dict[Needs, Needs] = {}
    by_id: dict[int, Needs] = {}
    shape_of: dict[int, Needs] = {}
    for key, (_, _, alike) in work.items():
        shape = by_id.get(id(alike))
        if shape is None:
            shape = by_id[id(alike)] = canonical.setdefault(alike, alike)
        shape_of[key] = shape
    return shape_of


def _halves(shape_of: dict[int, Needs], region: str) -> tuple[tuple[list[int], list[int]], int]:
    """The entry numbers in two lists of whole request shapes, this process's and the
    forked one's, that take about as long: a shape costs about as much as 12 entries of it
    (it is assessed on every type, each entry only priced and decided), and the forked
    process spends a third more on each, handing it over (0.8 s after 2.2 s of assessing
    half a 50,000-model realistic catalog). A shape this process has assessed already (an
    earlier planner's, as a repacking runs many) stays here and costs only its entries.
    With the number of request shapes not assessed yet."""
    side: dict[int, int] = {}
    load = [0.0, 0.0]
    halves: tuple[list[int], list[int]] = ([], [])
    new = 0
    for key, shape in shape_of.items():
        half = side.get(id(shape))
        if half is None:
            if has_alike_options(shape, region):
                half = side[id(shape)] = 0
            else:
                new += 1
                half = side[id(shape)] = 0 if load[0] <= load[1] else 1
                load[half] += 12 * _COST[half]
        load[half] += _COST[half]
        halves[half].append(key)
    return halves, new


def _compute(
    work: Work, shape_of: dict[int, Needs], keys: list[int], region: str, decider: Decider
) -> dict[int, Result]:
    options: dict[int, AlikeOptions] = {}  # by the shape's identity
    results: dict[int, Result] = {}
    for key in keys:
        model, needs, _ = work[key]
        shape = shape_of[key]
        try:
            alike = options.get(id(shape))
            if alike is None:
                alike = options[id(shape)] = alike_options(shape, region)
        except ValueError as error:
            results[key] = str(error)
            continue
        assessment = priced_assessment(alike, needs)
        results[key] = (needs, assessment, decider.decide(model, assessment))
    return results


def _handover(results: dict[int, Result], keys: list[int]) -> bytes:
    """``results`` of ``keys`` as plain values, pickled: per entry its pricing's number and
    its decision (or why it cannot be assessed), with each pricing and each shape's options
    once (the needs are the work's, which this process has)."""
    alikes: dict[int, int] = {}
    alike_rows: list[tuple] = []
    priced: dict[int, int] = {}
    priced_rows: list[tuple] = []
    entries: list[tuple | str] = []
    for key in keys:
        result = results[key]
        if isinstance(result, str):
            entries.append(result)
            continue
        _, assessment, decision = result
        options = assessment.options
        number = priced.get(id(options))
        if number is None:
            shape = options.alike
            alike = alikes.get(id(shape))
            if alike is None:
                alike = alikes[id(shape)] = len(alike_rows)
                alike_rows.append(shape.handover())
            number = priced[id(options)] = len(priced_rows)
            priced_rows.append((alike, options.handover()))
        entries.append((number, _decision_row(decision, options)))
    return pickle.dumps((alike_rows, priced_rows, entries), pickle.HIGHEST_PROTOCOL)


def _decision_row(decision: Decision | None, options: PricedOptions) -> tuple | None:
    """``decision`` as plain values; its options are the cheapest of their kind."""
    if decision is None:
        return None
    assert all(c.option is options.cheapest_found(c.kind) for c in decision.candidates)
    assert decision.option is options.cheapest_found(decision.option.kind)
    return (
        decision.option.kind,
        decision.min_copies,
        decision.to_zero,
        decision.scores.values(),
        decision.weights,
        decision.reason,
        decision.scale_to_zero_reason,
        tuple(
            (c.kind, c.option is not None, c.expected_hourly, c.utility, c.why_not)
            for c in decision.candidates
        ),
    )


def _taken_over(handed: bytes, keys: list[int], work: Work) -> dict[int, Result]:
    """The results :func:`_handover` pickled, for ``keys`` of ``work``."""
    alike_rows, priced_rows, entries = pickle.loads(handed)
    alikes = [AlikeOptions.taken_over(row) for row in alike_rows]
    priced = [PricedOptions.taken_over(alikes[alike], row) for alike, row in priced_rows]
    results: dict[int, Result] = {}
    for key, entry in zip(keys, entries, strict=True):
        if isinstance(entry, str):
            results[key] = entry
            continue
        number, decision = entry
        options = priced[number]
        alike = options.alike
        assessment = Assessment(options, alike.rejected, alike.limited, options.unavailable)
        results[key] = (work[key][1], assessment, _decision(decision, options))
    return results


def _decision(row: tuple | None, options: PricedOptions) -> Decision | None:
    if row is None:
        return None
    kind, copies, to_zero, scores, weights, reason, zero_reason, candidates = row
    restored = object.__new__(Scores)
    restored.__dict__.update(zip(_SCORES_FIELDS, scores, strict=True))
    return Decision(
        options.cheapest(kind),
        copies,
        to_zero,
        restored,
        weights,
        reason,
        zero_reason,
        tuple(
            Candidate(k, options.cheapest(k) if has_option else None, expected, utility, why)
            for k, has_option, expected, utility, why in candidates
        ),
    )
