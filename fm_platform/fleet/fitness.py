"""The hosting guidance's five fitness functions, and the hosting decision they drive.

Each score is a normalised axis in [0, 1] saying how strongly that concern weighs for the
model (1 = dominates):

1. ``model_size``: log10(copy memory in GiB) / log10(640), clipped: 0 under 1 GiB, about 0.5
   for one 24 GiB device, 1 at eight 80 GiB devices.
2. ``latency``: with ``latency_p50_ms``, 1 - log10(p50 / 100) / 2 (1 at 100 ms, 0 at 10 s);
   otherwise the class: strict 1, standard 0.5, relaxed 0.2, batch 0 (nobody waits); 0.25
   lower for a model that tolerates cold starts (``cold_start_tolerant: true``).
3. ``isolation``: 1 for ``isolation: dedicated``, else 0 (a tenant name alone asks for no
   isolation: a model that needs an endpoint of its own says so).
4. ``cost``: 0.5 + 0.5 x idle share, idle share = 1 - active_hours / 24 x min(1, peak_rpm /
   rpm of a copy): infrastructure cost always counts, and the more of a dedicated copy
   would sit idle, the more sharing and scaling to zero save.
5. ``scalability``: log2(copies at peak) / 5 (1 at 32 copies), plus 0.2 when the model
   scales to zero, clipped.

Priorities (``weights``, by default 1 for every axis) come from the catalog, then the
model's tenant (``tenants.<t>.weights``), then the model, each overriding the previous.

The decision, per model:

- constraints first: ``isolation: dedicated`` needs an endpoint of its own (single-model,
  or asynchronous); a ``group`` shares an Inference Components endpoint; a multi-model
  endpoint needs a model that does not generate tokens, under 1 B parameters, that
  tolerates cold starts; an asynchronous endpoint hosts only ``latency_class: batch``
  models, and a real-time kind none whose request body exceeds 6 MB
  (:meth:`fm_platform.fleet.kinds.Kind.refuses`);
- scale to zero (Inference Components): never for a model active 24 hours a day or with
  ``cold_start_tolerant: false``; always with ``true``; unset, never for
  ``latency_class: strict``, otherwise when the cost weight x the
  share of the day without traffic exceeds the latency weight x the latency score (a
  standard-latency model: idle more than 12 hours a day). Multi-model endpoints use the
  same test for cold starts. An asynchronous endpoint scales to zero for every model (its
  requests wait in the queue);
- among the kinds left, the highest utility = sum over axes of weight x score x fit, where
  fit is how well the kind serves the axis (:data:`fm_platform.fleet.kinds.KINDS`) and, for
  cost, the cheapest kind's expected cost over this kind's; equal utilities go to the
  asynchronous endpoint (only batch models reach it, and its queue holds the requests an
  Inference Components model scaled to zero would refuse), then to the kind that shares
  instances (Inference Components, then multi-model). The decisive reason is the axis that
  contributes most to the winner's lead over the runner-up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from fm_platform.fleet.catalog import AXES, Catalog, ModelEntry
from fm_platform.fleet.kinds import BATCH, KINDS, SCALE_TO_ZERO_LATENCY_FIT, min_copies
from fm_platform.fleet.options import Assessment, Option

DEFAULT_WEIGHTS = dict.fromkeys(AXES, 1.0)
_CLASS_LATENCY = {"strict": 1.0, "standard": 0.5, "relaxed": 0.2, BATCH: 0.0}
#: Why a model on a queued kind (asynchronous) scales to zero, whatever its priorities.
QUEUED_ZERO_REASON = (
    "scales to zero: an empty queue needs no instance, and a request queued at zero wakes one"
)


def _clip(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 3)


@dataclass(frozen=True)
class Scores:
    """One model's (or a group's mean) five scores, in :data:`AXES` order."""

    model_size: float
    latency: float
    isolation: float
    cost: float
    scalability: float

    def values(self) -> tuple[float, ...]:
        return tuple(getattr(self, axis) for axis in AXES)


def weights_for(model: ModelEntry, catalog: Catalog) -> dict[str, float]:
    """The model's priorities: defaults, then catalog, tenant and model weights."""
    weights = {**DEFAULT_WEIGHTS, **catalog.weights}
    if model.tenant is not None:
        weights.update(catalog.tenant_weights.get(model.tenant, {}))
    weights.update(model.weights or {})
    return weights


def score(model: ModelEntry, copy_gib: float, rpm: float, max_copies: int, to_zero: bool) -> Scores:
    """The five scores of ``model`` with copies of ``copy_gib`` serving ``rpm`` each,
    ``max_copies`` at peak, scaling to zero or not (rules in the module docstring)."""
    size = _clip(math.log10(max(1.0, copy_gib)) / math.log10(640))
    if model.latency_p50_ms is not None:
        latency = 1 - math.log10(max(100.0, model.latency_p50_ms) / 100) / 2
    else:
        latency = _CLASS_LATENCY[model.latency_class]
    if model.cold_start_tolerant:
        latency -= 0.25
    isolation = 1.0 if model.isolation == "dedicated" else 0.0
    peak = 60.0 if model.peak_rpm is None else model.peak_rpm
    utilisation = model.active_hours / 24 * min(1.0, peak / rpm)
    scale = math.log2(max_copies) / 5 + (0.2 if to_zero else 0.0)
    cost = 0.5 + 0.5 * (1 - utilisation)
    return Scores(size, _clip(latency), isolation, _clip(cost), _clip(scale))


def mean_scores(scores: list[Scores]) -> Scores:
    """The mean of each axis (a group's chart)."""
    return Scores(*(round(sum(s.values()[i] for s in scores) / len(scores), 3) for i in range(5)))


def tolerates_cold_start(
    model: ModelEntry, scores: Scores, weights: Mapping[str, float]
) -> tuple[bool, str]:
    """Whether the model may wait for a cold start, and why: the catalog's
    ``cold_start_tolerant`` when set; never for ``latency_class: strict``; else the cost
    of idling weighed against the latency score."""
    if model.cold_start_tolerant is not None:
        return model.cold_start_tolerant, f"cold_start_tolerant: {model.cold_start_tolerant}"
    if model.latency_class == "strict":
        return False, (
            "latency_class: strict (a cold start takes minutes; cold_start_tolerant: true "
            "allows one)"
        )
    idle = 1 - model.active_hours / 24
    cost = weights["cost"] * idle
    latency = weights["latency"] * scores.latency
    verdict = cost > latency
    relation = "outweighs" if verdict else "does not outweigh"
    return verdict, (
        f"idle {idle:.0%} of the day x cost weight {weights['cost']:g} = {cost:.2f} {relation} "
        f"latency score x weight = {latency:.2f}"
    )


@dataclass(frozen=True)
class Candidate:
    """A kind considered for a model: its cheapest option, expected USD per hour, utility
    and, when it lost or was excluded, why."""

    kind: str
    option: Option | None
    expected_hourly: float
    utility: float
    why_not: str | None


@dataclass(frozen=True)
class Decision:
    """A model's hosting choice: its kind's option, minimum copies, whether it scales to
    zero on Inference Components, scores, the decisive reason, the reason it scales to
    zero on Inference Components or not, and every candidate kind."""

    option: Option
    min_copies: int
    to_zero: bool
    scores: Scores
    weights: Mapping[str, float]
    reason: str
    scale_to_zero_reason: str
    candidates: tuple[Candidate, ...]


def _fit(kind: str, axis: str, cost_fit: float, to_zero: bool) -> float:
    if axis == "cost":
        return cost_fit
    if axis == "latency" and to_zero and KINDS[kind].scale_to_zero and not KINDS[kind].queued:
        return SCALE_TO_ZERO_LATENCY_FIT
    return KINDS[kind].fit[axis]


def _no_option(kind: str, assessment: Assessment) -> str:
    """Why ``kind`` has no option."""
    unavailable = assessment.unavailable.get(kind)
    if unavailable:
        return unavailable
    limit = assessment.limited.get(kind)
    if limit is not None:
        return f"no instance type fits and answers within its {limit:g} s request limit"
    return "no instance type fits"


@dataclass(frozen=True)
class _ZeroChoice:
    """Whether the model scales to zero where its kind may, whether it tolerates cold
    starts at all, and why."""

    to_zero: bool
    tolerant: bool
    tolerance_reason: str
    reason: str


def _scale_to_zero(
    model: ModelEntry, base: Scores, weights: Mapping[str, float], kinds: set[str]
) -> _ZeroChoice:
    tolerant, tolerance_reason = tolerates_cold_start(model, base, weights)
    may = any(KINDS[k].scale_to_zero and not KINDS[k].queued for k in kinds)
    to_zero = may and model.active_hours < 24 and tolerant
    if model.active_hours >= 24:
        reason = "no scale to zero: active 24 hours a day"
    else:
        reason = ("scales to zero" if to_zero else "no scale to zero") + ": " + tolerance_reason
    return _ZeroChoice(to_zero, tolerant, tolerance_reason, reason)


def _exclusions(
    model: ModelEntry, zero: _ZeroChoice, assessed: set[str]
) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Kinds that do not apply to this kind of work at all (the asynchronous endpoint for
    a model whose callers wait: never listed as rivals), kinds refused by the request body
    (never assessed), and every kind the catalog's constraints exclude, each with why."""
    batch = model.latency_class == BATCH
    inapplicable = {
        k: why
        for k, kind in KINDS.items()
        if kind.batch_only and (why := kind.refuses(batch, None)) is not None
    }
    refused = {
        k: why
        for k, kind in KINDS.items()
        if k not in inapplicable and (why := kind.refuses(batch, model.payload_mb)) is not None
    }
    excluded: dict[str, str] = dict(refused)
    for k, kind in KINDS.items():
        if model.isolation == "dedicated" and kind.shared:
            excluded.setdefault(k, f"isolation: dedicated ({model.isolation_reason})")
        if model.group is not None and not kind.packs_devices:
            excluded.setdefault(k, f"group {model.group} shares an Inference Components endpoint")
        if kind.cold_start and k in assessed and not zero.tolerant:
            excluded.setdefault(k, f"cold starts not tolerated ({zero.tolerance_reason})")
    return inapplicable, refused, excluded


def _only_option_reason(
    excluded: dict[str, str],
    refused: dict[str, str],
    inapplicable: dict[str, str],
    cheapest: Mapping[str, Option],
    assessment: Assessment,
) -> str:
    """ "the only option", with why each other kind is not one (kinds with equal reasons
    together)."""
    why_not = {k: why for k, why in excluded.items() if k in cheapest or k in refused}
    why_not.update(
        (k, _no_option(k, assessment))
        for k in KINDS
        if k not in cheapest and k not in refused | inapplicable
    )
    by_reason: dict[str, list[str]] = {}
    for k, why in why_not.items():
        by_reason.setdefault(why, []).append(k)
    if not by_reason:
        return "the only option"
    return (
        "the only option ("
        + "; ".join(f"{', '.join(ks)}: {why}" for why, ks in by_reason.items())
        + ")"
    )


def _lead_reason(
    winner: str,
    runner: str,
    scores: Scores,
    weights: Mapping[str, float],
    expected: Mapping[str, float],
    low: float,
    to_zero: bool,
) -> str:
    """The axis that contributes most to ``winner``'s lead over ``runner``, with both
    kinds' expected cost a month."""
    cost_fit = {k: low / expected[k] if expected[k] else 1.0 for k in (winner, runner)}
    lead = {
        axis: weights[axis]
        * getattr(scores, axis)
        * (
            _fit(winner, axis, cost_fit[winner], to_zero)
            - _fit(runner, axis, cost_fit[runner], to_zero)
        )
        for axis in AXES
    }
    axis = max(lead, key=lambda a: lead[a])
    costs = f"${expected[winner] * 730:,.0f} vs ${expected[runner] * 730:,.0f} a month"
    if lead[axis] <= 1e-9:
        preferred = (
            "a queue preferred for batch work"
            if KINDS[winner].queued
            else "shared instances preferred"
        )
        return f"equal utility with {runner}, {preferred}: {costs}"
    return (
        f"{axis} (score {getattr(scores, axis):.2f} x weight {weights[axis]:g}) "
        f"decides over {runner}: {costs}"
    )


def decide(model: ModelEntry, catalog: Catalog, assessment: Assessment) -> Decision | None:
    """The hosting decision for ``model`` (module docstring); None when no kind can host
    it (``assessment`` says why per type)."""
    weights = weights_for(model, catalog)
    cheapest = {kind: assessment.options.cheapest(kind) for kind in assessment.options}
    if not cheapest:
        return None
    overall = min(cheapest.values(), key=lambda o: o.expected_hourly(1, model.active_hours))
    base = score(model, overall.copy_gib, overall.perf.rpm, overall.max_copies, False)
    zero = _scale_to_zero(model, base, weights, set(cheapest))
    inapplicable, refused, excluded = _exclusions(model, zero, set(cheapest))
    expected = {
        kind: option.expected_hourly(min_copies(kind, zero.to_zero), model.active_hours)
        for kind, option in cheapest.items()
    }
    allowed = [k for k in cheapest if k not in excluded and k not in inapplicable]
    if not allowed:
        return None
    low = min(expected[k] for k in allowed)
    scores = score(model, overall.copy_gib, overall.perf.rpm, overall.max_copies, zero.to_zero)
    weighted = [(axis, weights[axis] * getattr(scores, axis)) for axis in AXES]
    cost_fit = {kind: low / expected[kind] if expected[kind] else 1.0 for kind in allowed}
    utilities = {
        kind: sum(ws * _fit(kind, axis, cost_fit[kind], zero.to_zero) for axis, ws in weighted)
        for kind in allowed
    }
    ranked = sorted(allowed, key=lambda k: (-round(utilities[k], 9), KINDS[k].preference))
    winner = ranked[0]
    if len(ranked) == 1:
        reason = _only_option_reason(excluded, refused, inapplicable, cheapest, assessment)
    else:
        reason = _lead_reason(winner, ranked[1], scores, weights, expected, low, zero.to_zero)
    candidates = tuple(
        Candidate(
            kind,
            cheapest.get(kind),
            expected.get(kind, 0.0),
            utilities.get(kind, 0.0),
            excluded.get(kind)
            or inapplicable.get(kind)
            or (None if kind == winner else "lower utility" if kind in cheapest else None)
            or (None if kind in cheapest else _no_option(kind, assessment)),
        )
        for kind in KINDS
    )
    return Decision(
        cheapest[winner],
        min_copies(winner, zero.to_zero),
        zero.to_zero,
        scores,
        weights,
        reason,
        zero.reason,
        candidates,
    )
