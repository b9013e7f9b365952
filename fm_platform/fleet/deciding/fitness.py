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
  (:meth:`fm_platform.fleet.deciding.kinds.Kind.refuses`);
- scale to zero (Inference Components): never for a model active 24 hours a day or with
  ``cold_start_tolerant: false``; always with ``true``; unset, never for
  ``latency_class: strict``, otherwise when the cost weight x the
  share of the day without traffic exceeds the latency weight x the latency score (a
  standard-latency model: idle more than 12 hours a day). Multi-model endpoints use the
  same test for cold starts. An asynchronous endpoint scales to zero for every model (its
  requests wait in the queue);
- among the kinds left, the highest utility = sum over axes of weight x score x fit, where
  fit is how well the kind serves the axis (:data:`fm_platform.fleet.deciding.kinds.KINDS`) and, for
  cost, the cheapest kind's expected cost over this kind's, less :data:`ENDPOINT_TERM` for
  a kind that opens an endpoint for the model alone (single-model, serverless): what
  operating one more endpoint weighs, so that at equal cost a model shares and gets an
  endpoint of its own when the catalog asks (``isolation: dedicated``) or its numbers
  lead by more (a real saving, or priorities weighted so); the asynchronous endpoint
  pays none, its queue being what batch work needs; equal utilities go to the
  asynchronous endpoint (only batch models reach it, and its queue holds the requests an
  Inference Components model scaled to zero would refuse), then to the kind that shares
  instances (Inference Components, then multi-model). The decisive reason is the axis that
  contributes most to the winner's lead over the runner-up.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from fm_platform.fleet.deciding.kinds import BATCH, KINDS, SCALE_TO_ZERO_LATENCY_FIT, min_copies
from fm_platform.fleet.deciding.options import Assessment, Option
from fm_platform.fleet.models.catalog import AXES, Catalog, ModelEntry
from fm_platform.fleet.placing.cost import monthly, usd

DEFAULT_WEIGHTS = dict.fromkeys(AXES, 1.0)
_CLASS_LATENCY = {"strict": 1.0, "standard": 0.5, "relaxed": 0.2, BATCH: 0.0}
#: Why a model on a queued kind (asynchronous) scales to zero, whatever its priorities.
QUEUED_ZERO_REASON = (
    "scales to zero: an empty queue needs no instance, and a request queued at zero wakes one"
)
#: What operating one more endpoint for one model weighs in a decision, in utility: an
#: endpoint counts against the account's endpoint quota per region, carries its own
#: alarms, takes 6-8 CloudFormation resources of its stack's 500
#: (:data:`fm_platform.fleet.deciding.kinds.KINDS`' ``endpoint_resources``) and minutes of
#: every deploy that creates or updates it; a model copy on an Inference Components
#: endpoint that exists takes none of these. 0.25 is more than an endpoint of its own
#: gains over Inference Components on the other axes at equal cost (latency fit 1.0
#: against 0.8, at most 0.2 at latency score 1 and weight 1), so at equal cost a model
#: shares; a lead from a cheaper option or heavier weights outweighs it.
ENDPOINT_TERM = 0.25
#: The position of the cost axis in :data:`AXES` (its fit is each decision's own).
_COST = AXES.index("cost")
_AXIS_VALUES = operator.attrgetter(*AXES)


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
        values: tuple[float, ...] = _AXIS_VALUES(self)
        return values


def weights_for(model: ModelEntry, catalog: Catalog) -> dict[str, float]:
    """The model's priorities: defaults, then catalog, tenant and model weights."""
    weights = {**DEFAULT_WEIGHTS, **catalog.weights}
    if model.tenant is not None:
        weights.update(catalog.tenant_weights.get(model.tenant, {}))
    weights.update(model.weights or {})
    return weights


def _latency_score(model: ModelEntry) -> float:
    """The model's latency score (module docstring): its traffic plays no part."""
    if model.latency_p50_ms is not None:
        latency = 1 - math.log10(max(100.0, model.latency_p50_ms) / 100) / 2
    else:
        latency = _CLASS_LATENCY[model.latency_class]
    if model.cold_start_tolerant:
        latency -= 0.25
    return _clip(latency)


def _isolation_score(model: ModelEntry) -> float:
    return 1.0 if model.isolation == "dedicated" else 0.0


def _scores(
    model: ModelEntry,
    latency: float,
    isolation: float,
    copy_gib: float,
    rpm: float,
    max_copies: int,
    to_zero: bool,
) -> Scores:
    """The five scores of ``model`` given its ``latency`` and ``isolation`` scores (as
    :func:`score` computes them)."""
    size = _clip(math.log10(max(1.0, copy_gib)) / math.log10(640))
    peak = 60.0 if model.peak_rpm is None else model.peak_rpm
    utilisation = model.active_hours / 24 * min(1.0, peak / rpm)
    scale = math.log2(max_copies) / 5 + (0.2 if to_zero else 0.0)
    cost = 0.5 + 0.5 * (1 - utilisation)
    return Scores(size, latency, isolation, _clip(cost), _clip(scale))


def score(model: ModelEntry, copy_gib: float, rpm: float, max_copies: int, to_zero: bool) -> Scores:
    """The five scores of ``model`` with copies of ``copy_gib`` serving ``rpm`` each,
    ``max_copies`` at peak, scaling to zero or not (rules in the module docstring)."""
    latency, isolation = _latency_score(model), _isolation_score(model)
    return _scores(model, latency, isolation, copy_gib, rpm, max_copies, to_zero)


def tolerates_cold_start(
    model: ModelEntry, latency: float, weights: Mapping[str, float]
) -> tuple[bool, str]:
    """Whether the model may wait for a cold start, and why: the catalog's
    ``cold_start_tolerant`` when set; never for ``latency_class: strict``; else the cost
    of idling weighed against the ``latency`` score."""
    if model.cold_start_tolerant is not None:
        return model.cold_start_tolerant, f"cold_start_tolerant: {model.cold_start_tolerant}"
    if model.latency_class == "strict":
        return False, (
            "latency_class: strict (a cold start takes minutes; cold_start_tolerant: true "
            "allows one)"
        )
    idle = 1 - model.active_hours / 24
    cost = weights["cost"] * idle
    weighted_latency = weights["latency"] * latency
    verdict = cost > weighted_latency
    relation = "outweighs" if verdict else "does not outweigh"
    return verdict, (
        f"idle {idle:.0%} of the day x cost weight {weights['cost']:g} = {cost:.2f} {relation} "
        f"latency score x weight = {weighted_latency:.2f}"
    )


class Candidate(NamedTuple):
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


def _fit(kind: str, axis: str, to_zero: bool) -> float:
    """How well ``kind`` serves ``axis`` (not cost) for a model that scales to zero or not."""
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
    model: ModelEntry, latency: float, weights: Mapping[str, float], kinds: Collection[str]
) -> _ZeroChoice:
    tolerant, tolerance_reason = tolerates_cold_start(model, latency, weights)
    may = any(KINDS[k].scale_to_zero and not KINDS[k].queued for k in kinds)
    to_zero = may and model.active_hours < 24 and tolerant
    if model.active_hours >= 24:
        reason = "no scale to zero: active 24 hours a day"
    else:
        reason = ("scales to zero" if to_zero else "no scale to zero") + ": " + tolerance_reason
    return _ZeroChoice(to_zero, tolerant, tolerance_reason, reason)


def _exclusions(
    model: ModelEntry, zero: _ZeroChoice, assessed: Collection[str]
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
        if kind.pools_memory and (model.hub is not None or model.weights_uri is not None):
            key = "hub" if model.hub is not None else "weights_uri"
            excluded.setdefault(
                k,
                f"its weights come from {key}; a multi-model endpoint loads every model "
                "from its own prefix in the fleet's artifacts bucket",
            )
    return inapplicable, refused, excluded


@dataclass(frozen=True)
class _Standing:
    """What a decision reads of a model but its traffic and options, for its active hours
    and the kinds with options: its priorities (by axis, and in :data:`AXES` order), its
    latency and isolation scores, its scale to zero, the kinds inapplicable, refused and
    excluded (:func:`_exclusions`), the kinds left (in the options' order) with their
    fit per axis (:data:`AXES` order; 0 for cost, each decision's own), each kind's
    fewest copies and why each kind ruled out is."""

    weights: dict[str, float]
    axis_weights: tuple[float, ...]
    latency: float
    isolation: float
    zero: _ZeroChoice
    inapplicable: dict[str, str]
    refused: dict[str, str]
    excluded: dict[str, str]
    allowed: tuple[str, ...]
    fits: dict[str, tuple[float, ...]]
    copies: dict[str, int]
    ruled_out: dict[str, str]

    def fits_with_cost(self, kind: str, cost_fit: float) -> list[float]:
        """``kind``'s fit per axis in :data:`AXES` order, ``cost_fit`` for cost."""
        fits = list(self.fits[kind])
        fits[_COST] = cost_fit
        return fits


def _standing(model: ModelEntry, catalog: Catalog, kinds: tuple[str, ...]) -> _Standing:
    """``model``'s standing in ``catalog`` with options of ``kinds``."""
    weights = weights_for(model, catalog)
    latency = _latency_score(model)
    zero = _scale_to_zero(model, latency, weights, kinds)
    inapplicable, refused, excluded = _exclusions(model, zero, kinds)
    allowed = tuple(k for k in kinds if k not in excluded and k not in inapplicable)
    return _Standing(
        weights=weights,
        axis_weights=tuple(weights[axis] for axis in AXES),
        latency=latency,
        isolation=_isolation_score(model),
        zero=zero,
        inapplicable=inapplicable,
        refused=refused,
        excluded=excluded,
        allowed=allowed,
        fits={
            kind: tuple(0.0 if a == "cost" else _fit(kind, a, zero.to_zero) for a in AXES)
            for kind in allowed
        },
        copies={k: min_copies(k, zero.to_zero) for k in KINDS},
        ruled_out={k: why for k in KINDS if (why := excluded.get(k) or inapplicable.get(k))},
    )


def allowed_without_choices(
    model: ModelEntry, catalog: Catalog, kinds: tuple[str, ...]
) -> tuple[tuple[str, ...], bool]:
    """The kinds among ``kinds`` (those with options) that ``model``'s constraints allow,
    and whether it scales to zero where its kind may (for a model whose catalog choices,
    ``group`` and ``isolation``, are already taken out)."""
    standing = _standing(model, catalog, kinds)
    return standing.allowed, standing.zero.to_zero


def _only_option_reason(
    standing: _Standing, cheapest: Mapping[str, Option], assessment: Assessment
) -> str:
    """ "the only option", with why each other kind is not one (kinds with equal reasons
    together)."""
    excluded, refused = standing.excluded, standing.refused
    why_not = {k: why for k, why in excluded.items() if k in cheapest or k in refused}
    why_not.update(
        (k, _no_option(k, assessment))
        for k in KINDS
        if k not in cheapest and k not in refused | standing.inapplicable
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


def opens_endpoint(kind: str) -> bool:
    """Whether ``kind`` opens an endpoint for the model alone that pays
    :data:`ENDPOINT_TERM` (not a shared kind, not the asynchronous endpoint's queue)."""
    return not KINDS[kind].shared and not KINDS[kind].queued


def endpoint_term(kind: str) -> float:
    """The utility ``kind`` gives up for an endpoint of the model's own."""
    return ENDPOINT_TERM if opens_endpoint(kind) else 0.0


def _lead_reason(
    winner: str,
    runner: str,
    scores: Scores,
    weights: Mapping[str, float],
    weighted: list[float],
    fits: Mapping[str, list[float]],
    expected: Mapping[str, float],
) -> str:
    """The axis that contributes most to ``winner``'s lead over ``runner`` (``weighted``:
    weight x score per axis, ``fits``: each kind's fit per axis), or the endpoint term
    when it does, with both kinds' own cost a month (each option alone, without a share of
    an endpoint's unused instances: :mod:`fm_platform.fleet.placing.cost`)."""
    lead = [ws * (w - r) for ws, w, r in zip(weighted, fits[winner], fits[runner], strict=True)]
    top = max(range(len(AXES)), key=lead.__getitem__)
    axis = AXES[top]
    mine, theirs = usd(monthly(expected[winner])), usd(monthly(expected[runner]))
    costs = f"own cost {mine} vs {theirs} a month"
    term = endpoint_term(runner) - endpoint_term(winner)
    if term > lead[top] + 1e-9:
        return (
            f"shares: {runner} would open an endpoint of its own, which weighs "
            f"{ENDPOINT_TERM:g} (quota, alarms, stack resources, deploy time): {costs}"
        )
    if lead[top] <= 1e-9:
        preferred = (
            "a queue preferred for batch work"
            if KINDS[winner].queued
            else "shared instances preferred"
        )
        return f"equal utility with {runner}, {preferred}: {costs}"
    return (
        f"{axis} (score {scores.values()[top]:.2f} x weight {weights[axis]:g}) "
        f"decides over {runner}: {costs}"
    )


def _candidates(
    standing: _Standing,
    cheapest: Mapping[str, Option],
    expected: Mapping[str, float],
    utilities: Mapping[str, float],
    winner: str,
    assessment: Assessment,
) -> tuple[Candidate, ...]:
    """Every kind as a candidate: ruled out, the winner, of lower utility, or without an
    option."""
    return tuple(
        [
            Candidate(
                kind,
                cheapest.get(kind),
                expected.get(kind, 0.0),
                utilities.get(kind, 0.0),
                standing.ruled_out.get(kind)
                or (
                    None
                    if kind == winner
                    else "lower utility"
                    if kind in cheapest
                    else _no_option(kind, assessment)
                ),
            )
            for kind in KINDS
        ]
    )


#: The fields of a model its standing reads (:func:`_standing`), but its weights.
_STANDING_FIELDS = operator.attrgetter(
    "latency_p50_ms",
    "latency_class",
    "cold_start_tolerant",
    "isolation",
    "isolation_reason",
    "group",
    "payload_mb",
    "active_hours",
    "hub",
    "weights_uri",
)


class Decider:
    """The hosting decisions of models of ``catalog`` (:meth:`decide`). A model's standing
    is computed once per :data:`_STANDING_FIELDS`, tenant's weights, own weights and kinds
    with options (everything it reads besides the catalog and the kind table, both fixed
    while the decider lives) and shared by the models alike."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._tenant_weights = {t: tuple(w.items()) for t, w in catalog.tenant_weights.items()}
        self._standings: dict[tuple, _Standing] = {}

    def _standing(self, model: ModelEntry, kinds: tuple[str, ...]) -> _Standing:
        tenant = self._tenant_weights.get(model.tenant) if model.tenant is not None else None
        own = tuple(model.weights.items()) if model.weights else None
        key = (_STANDING_FIELDS(model), tenant, own, kinds)
        found = self._standings.get(key)
        if found is None:
            found = self._standings[key] = _standing(model, self.catalog, kinds)
        return found

    def decide(self, model: ModelEntry, assessment: Assessment) -> Decision | None:
        """The hosting decision for ``model`` (module docstring); None when no kind can
        host it (``assessment`` says why per type)."""
        options = assessment.options
        cheapest = {kind: options.cheapest(kind) for kind in options}
        if not cheapest:
            return None
        hours = model.active_hours
        at_one = {kind: option.expected_hourly(1, hours) for kind, option in cheapest.items()}
        overall = cheapest[min(at_one, key=at_one.__getitem__)]
        standing = self._standing(model, tuple(cheapest))
        if not standing.allowed:
            return None
        copies, to_zero = standing.copies, standing.zero.to_zero
        expected = {
            kind: at_one[kind] if copies[kind] == 1 else option.expected_hourly(copies[kind], hours)
            for kind, option in cheapest.items()
        }
        low = min(expected[k] for k in standing.allowed)
        scores = _scores(
            model,
            standing.latency,
            standing.isolation,
            overall.copy_gib,
            overall.perf.rpm,
            overall.max_copies,
            to_zero,
        )
        weighted = list(map(operator.mul, standing.axis_weights, scores.values()))
        fits = {
            kind: standing.fits_with_cost(kind, low / expected[kind] if expected[kind] else 1.0)
            for kind in standing.allowed
        }
        utilities = {
            kind: sum(map(operator.mul, weighted, fit)) - endpoint_term(kind)
            for kind, fit in fits.items()
        }
        ranked = sorted(
            standing.allowed, key=lambda k: (-round(utilities[k], 9), KINDS[k].preference)
        )
        winner = ranked[0]
        if len(ranked) == 1:
            reason = _only_option_reason(standing, cheapest, assessment)
        else:
            reason = _lead_reason(
                winner, ranked[1], scores, standing.weights, weighted, fits, expected
            )
        return Decision(
            cheapest[winner],
            copies[winner],
            to_zero,
            scores,
            standing.weights,
            reason,
            standing.zero.reason,
            _candidates(standing, cheapest, expected, utilities, winner, assessment),
        )
