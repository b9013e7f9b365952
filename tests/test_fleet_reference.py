"""The planner's shortcuts give what the plain computation gives, on a realistic catalog:
options shared across types and kinds, hardware problems shared across models, each kind's
cheapest option found without building the others, and the bound's smaller linear
program (and each of its reductions, on programs built to need them)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import highspy
import numpy as np
import pytest

from fm_platform.fleet.deciding import options
from fm_platform.fleet.deciding.kinds import IC, KINDS, min_copies
from fm_platform.fleet.models.catalog import catalog_from_data
from fm_platform.fleet.outputs import relaxation
from fm_platform.fleet.outputs.bound import allowed_kinds, lower_bound, program
from fm_platform.fleet.placing.planner import Planner
from fm_platform.hardware.instances import instance_spec
from tests.fleet_support import FAMILIES, realistic_catalog_data


@pytest.fixture(scope="module")
def planner() -> Planner:
    planner = Planner(catalog_from_data(realistic_catalog_data(400, seed=11), FAMILIES))
    planner.run()
    return planner


def _plain_alike(needs, region: str) -> dict[str, list[options.Option]]:
    """Every option of ``needs`` computed afresh for each type and kind (a serverless
    kind's memory sizes on their own, as it has no instance types)."""
    found: dict[str, list[options.Option]] = {}
    kinds = []
    for kind, kind_needs in options._kind_needs(needs, {}):
        if kind.serverless:
            options._serverless_options(kind_needs, kind, region, options.AlikeOptions(), found)
        else:
            kinds.append((kind, kind_needs))
    for spec, price in options._specs(region):
        if options.hardware_problem(needs, spec, region) is not None:
            continue
        for kind, kind_needs in kinds:
            fresh = options._options_on(kind_needs, kind, spec, price, [], options._Shared(region))
            if fresh:  # a kind no type offers has no options (the assessment says why)
                found.setdefault(kind.name, []).extend(fresh)
    return found


def test_options_shared_across_types_and_kinds_are_those_computed_afresh(planner):
    alike = {
        dataclasses.replace(k.needs, name="", peak_rpm=0.0, active_hours=24.0, defaults=())
        for k in planner.assessed.values()
    }
    for needs in sorted(alike, key=repr)[:60]:
        assert (
            _plain_alike(needs, planner.region)
            == options._assess_alike(needs, planner.region).options
        )


def test_hardware_problems_shared_across_needs_are_those_computed_afresh(planner):
    specs = [spec for spec, _ in options._specs(planner.region)]
    for known in planner.assessed.values():
        for spec in specs:
            fresh = options._device_problem(known.needs, spec) or options.container_problem(
                known.needs.container, spec.accelerator, planner.region
            )
            assert options.hardware_problem(known.needs, spec, planner.region) == fresh


def test_each_kinds_cheapest_option_and_cost_are_the_sorted_lists_first(planner):
    for name, known in planner.assessed.items():
        priced, hours = known.assessment.options, known.needs.active_hours
        for kind in priced:
            ranked = priced[kind]  # built and sorted in full
            assert priced.cheapest(kind) == ranked[0], (name, kind)
            for low in (0, 1):
                lowest = min(o.expected_hourly(low, hours) for o in ranked)
                assert priced.lowest_hourly(kind, low) == lowest, (name, kind, low)


@pytest.mark.parametrize("hours", [0.0, 6.0, 24.0])
def test_the_cheapest_at_any_traffic_is_the_sorted_lists_first(planner, hours):
    # the search skips options another beats at every traffic, except where no copy costs
    # anything (no active hours, none at minimum) and every option ties
    alike = {id(k.assessment.options): k for k in planner.assessed.values()}
    for known in list(alike.values())[::3]:
        base = known.assessment.options
        for peak in (0.5, 30.0, 3000.0):
            priced = options.PricedOptions(base._alike, peak, hours)
            for kind in priced:
                assert priced.cheapest(kind) == priced[kind][0], (kind, peak)
                for low in (0, 1):
                    lowest = min(o.expected_hourly(low, hours) for o in priced[kind])
                    assert priced.lowest_hourly(kind, low) == lowest, (kind, peak, low)


def _plain_bound(planner: Planner) -> float:
    """The relaxation with a variable per model and option, and one per type's instances."""
    costs: list[float] = []
    rows: list[tuple[float, float, dict[int, float]]] = []
    usage: dict[str, dict[int, float]] = defaultdict(dict)
    memory: dict[str, dict[int, float]] = defaultdict(dict)
    traffic: dict[str, dict[int, float]] = defaultdict(dict)
    prices: dict[str, float] = {}

    def column(cost: float) -> int:
        costs.append(cost)
        return len(costs) - 1

    for name in planner.plan.placements:
        known = planner.assessed[name]
        assert known.decision is not None
        a = known.needs.active_hours / 24
        mine: dict[int, float] = {}
        for kind_name in allowed_kinds(known):
            kind = KINDS[kind_name]
            minimum = min_copies(kind_name, known.decision.to_zero)
            for o in known.assessment.options[kind_name]:
                prices[o.instance_type] = o.price
                if kind.packs_devices:
                    c = column(0.0)
                    average = minimum + a * (o.max_copies - minimum)
                    usage[o.instance_type][c] = o.shape.accelerators * average
                elif kind.pools_memory:
                    c = column(0.0)
                    memory[o.instance_type][c] = o.copy_gib / o.usable_gib
                    traffic[o.instance_type][c] = a * o.load
                else:
                    low = minimum if kind.queued else max(1, minimum)
                    c = column(o.price * (low + a * (o.max_copies - low)))
                mine[c] = 1.0
        rows.append((1.0, 1.0, mine))
    for t, entries in usage.items():
        y = column(prices[t])
        devices = float(instance_spec(t).accelerator_count)
        rows.append((0.0, highspy.kHighsInf, {y: devices, **{c: -v for c, v in entries.items()}}))
    pooled = {t: column(prices[t]) for t in memory}
    for table in (memory, traffic):
        for t, entries in table.items():
            y = pooled[t]
            rows.append((0.0, highspy.kHighsInf, {y: 1.0, **{c: -v for c, v in entries.items()}}))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = len(costs)
    h.addVars(n, np.zeros(n), np.full(n, highspy.kHighsInf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(costs))
    for lower, upper, entries in rows:
        h.addRow(
            lower,
            upper,
            len(entries),
            np.array(list(entries), dtype=np.int32),
            np.array(list(entries.values())),
        )
    h.run()
    return float(h.getInfo().objective_function_value)


def test_the_bounds_smaller_program_has_the_plain_relaxations_optimum(planner):
    assert lower_bound(planner) == pytest.approx(_plain_bound(planner), rel=1e-9)


def test_the_fixture_needs_every_shortcut_of_the_bound(planner):
    # models on Inference Components that may scale to zero: priced at their peak copies
    assert any(
        IC in allowed_kinds(known) and known.decision.to_zero
        for known in planner.assessed.values()
        if known.decision is not None
    )
    full = program(planner)
    fewer = relaxation.without_dominated_types(full)
    assert len(np.unique(fewer.typ)) < len(np.unique(full.typ))
    alike = relaxation.merged(fewer)
    assert len(np.unique(alike.cls)) < len(np.unique(fewer.cls))
    assert relaxation.optimum(alike) == pytest.approx(relaxation.optimum(full), rel=1e-9)


def _random_program(rng: np.random.Generator) -> relaxation.Program:
    """Classes on random pooled types, with types that dominate others: a copy of a type
    (same price and columns: each dominates the other), a bigger one (twice the price,
    half the memory share, the same traffic) and a cheaper one missing a class; a class
    with two columns on one type; a class repeated, one with no pooled column."""
    k, t = 12, 5
    prices = rng.uniform(0.1, 2.0, t)
    cls, typ, memory, traffic = [], [], [], []
    for c in range(k):
        for u in range(t):
            if rng.random() < 0.7 or u == 0:
                cls.append(c), typ.append(u)
                memory.append(rng.uniform(0.01, 0.6)), traffic.append(rng.uniform(0.0, 0.6))
    cls.append(0), typ.append(1), memory.append(0.05), traffic.append(0.5)
    on_zero = [i for i, u in enumerate(typ) if u == 0]
    for i in on_zero:  # type t: a copy of type 0; t + 1: twice as big
        cls.append(cls[i]), typ.append(t), memory.append(memory[i]), traffic.append(traffic[i])
        cls.append(cls[i]), typ.append(t + 1), memory.append(memory[i] / 2)
        traffic.append(traffic[i])
    for i in on_zero[1:]:  # t + 2: cheaper, but not for the first class on type 0
        cls.append(cls[i]), typ.append(t + 2), memory.append(memory[i]), traffic.append(traffic[i])
    for i in [i for i, c in enumerate(cls) if c == 1]:  # class k repeats class 1
        cls.append(k), typ.append(typ[i]), memory.append(memory[i]), traffic.append(traffic[i])
    prices = np.concatenate([prices, [prices[0], 2 * prices[0], prices[0] / 2]])
    alone = np.where(rng.random(k + 2) < 0.3, np.inf, rng.uniform(0.05, 1.5, k + 2))
    alone[k] = alone[1]
    return relaxation.Program(
        counts=rng.integers(1, 5, k + 2).astype(float),
        alone=alone,
        prices=prices,
        cls=np.array(cls),
        typ=np.array(typ),
        memory=np.array(memory),
        traffic=np.array(traffic),
    )


@pytest.mark.parametrize("seed", range(25))
def test_each_reduction_keeps_the_optimum(seed):
    p = _random_program(np.random.default_rng(seed))
    plain = relaxation.optimum(p)
    fewer = relaxation.without_dominated_types(p)
    kept = set(fewer.typ.tolist())
    assert 6 not in kept  # twice the price for half the memory share, the same traffic
    assert len(kept & {0, 5}) == 1  # of two that dominate each other, one stays
    assert 1 in kept  # two columns of one class: never dropped
    assert relaxation.optimum(fewer) == pytest.approx(plain, rel=1e-9)
    alike = relaxation.merged(fewer)
    assert len(alike.counts) < len(p.counts)
    assert relaxation.optimum(alike) == pytest.approx(plain, rel=1e-9)
    assert p.reduced_optimum() == pytest.approx(plain, rel=1e-9)
