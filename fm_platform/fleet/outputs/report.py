"""The plan for a terminal: one row per model (with the reason for its option), one row
per endpoint (cost at minimum, expected and maximum scale) and a summary; and the
explanation of one model's decision."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from fm_platform.fleet.deciding.fitness import ENDPOINT_TERM, Candidate, Decision, opens_endpoint
from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.deciding.options import Option
from fm_platform.fleet.outputs.bound import RELAXES
from fm_platform.fleet.outputs.plan import EndpointPlan, Placement, Plan
from fm_platform.fleet.placing.cost import (
    HOURS_PER_MONTH,
    ModelCost,
    model_cost,
    monthly,
    plan_cost,
    usd,
)
from fm_platform.fleet.placing.planner import Planner
from fm_platform.fleet.sizing.needs import Needs
from fm_platform.fleet.sizing.serverless import ACCOUNT_NOTE
from fm_platform.hardware.prices import price_source
from fm_platform.hardware.serverless_prices import serverless_price_source

MODEL_HEADERS = (
    "model",
    "endpoint",
    "tp",
    "copies",
    "GiB/copy",
    "rpm/copy",
    "conc",
    "throughput",
    "defaults",
    "$/month",
    "own+idle+unfilled",
    "cold start",
    "reason",
)
#: Short names of defaulted inputs in the model table.
SHORT = {
    "prompt_tokens": "prompt",
    "output_tokens": "output",
    "context_tokens": "context",
    "peak_rpm": "peak_rpm",
    "kv_cache": "kv_cache",
    "task": "task",
    "hidden_size": "hidden",
    "steps": "steps",
    "resolution": "resolution",
    "audio_seconds": "audio",
    "decoder_share": "decoder_share",
}
#: Defaulted inputs of what one image or recording computes (``--explain``'s request line).
WORK_DEFAULTS = ("steps", "resolution", "audio_seconds", "decoder_share")
ENDPOINT_HEADERS = (
    "stack",
    "endpoint",
    "kind",
    "instance type",
    "models",
    "inst min-max",
    "$/h min / expected / max",
    "$/month expected",
)


def _count(number: int, noun: str) -> str:
    """``1 stack``, ``2 stacks``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _per_copy(accelerators: int) -> str:
    """What each copy takes: ``of 1 accelerator``, ``of 4 accelerators``, ``on CPU``."""
    return f"of {_count(accelerators, 'accelerator')}" if accelerators else "on CPU"


def _on_type(o: Option) -> str:
    """An option's type and its devices per copy (``ml.g5.12xlarge x4``), a CPU type's
    with ``(CPU)``, a serverless memory size alone."""
    if o.shape.accelerators:
        return f"{o.instance_type} x{o.shape.accelerators}"
    return o.instance_type if KINDS[o.kind].serverless else f"{o.instance_type} (CPU)"


def table(rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def model_table(plan: Plan) -> str:
    """One row per model, by endpoint: shape, copies, device memory per copy, throughput
    at the concurrency each copy runs (``conc``) and where it comes from, the inputs that
    were defaults, expected cost a month (total, and its parts: own, idle minimum,
    unfilled share; :mod:`fm_platform.fleet.placing.cost`), the expected cold start of a
    model that may scale to zero and the reason for its option."""
    rows = [MODEL_HEADERS]
    for e in sorted(plan.endpoints.values(), key=lambda e: (e.stack, e.name)):
        for name in e.models:
            p = plan.placements[name]
            cost = model_cost(p)
            rows.append(
                (
                    name,
                    e.name,
                    str(p.accelerators),
                    f"{p.min_copies}-{p.max_copies}",
                    f"{p.device_memory_gib:,.1f}",
                    f"{p.rpm_per_copy:,.1f}",
                    str(p.concurrency),
                    p.throughput,
                    ",".join(SHORT.get(d, d) for d in p.defaults) or "-",
                    f"{cost.total:,}",
                    _parts(cost),
                    f"{p.cold_start_s / 60:.1f} min" if p.cold_start_s is not None else "-",
                    p.reason,
                )
            )
    return table(rows)


def _parts(cost: ModelCost) -> str:
    """The table's parts of a model's monthly cost: ``11,521+0+6,912``."""
    return f"{cost.own:,}+{cost.idle_minimum:,}+{cost.unfilled:,}"


def endpoint_table(plan: Plan) -> str:
    """One row per endpoint, by stack."""
    rows = [ENDPOINT_HEADERS]
    for e in sorted(plan.endpoints.values(), key=lambda e: (e.stack, e.name)):
        rows.append(
            (
                e.stack,
                e.name,
                e.kind,
                e.instance_type,
                str(len(e.models)),
                f"{e.min_instances}-{e.max_instances}",
                f"{e.min_hourly:,.2f} / {e.expected_hourly:,.2f} / {e.max_hourly:,.2f}",
                f"{e.expected_hourly * HOURS_PER_MONTH:,.0f}",
            )
        )
    return table(rows)


def summary(plan: Plan, bound: float | None, bound_note: str = "") -> list[str]:
    """Counts, cost at minimum / expected / maximum scale, the bound and the inputs."""
    cost = plan_cost(plan)
    source = price_source()
    placements = plan.placements.values()
    throughput = Counter(p.throughput for p in placements)
    defaulted = [p.name for p in placements if p.defaults]
    lines = [
        f"{_count(len(plan.placements), 'model')} on {_count(len(plan.endpoints), 'endpoint')} "
        f"in {_count(len(plan.stacks), 'stack')}; prices for {plan.region} ({source['id']}, "
        f"retrieved {source['retrieved']})",
        f"instances: {cost.min_instances} at minimum scale, {cost.expected_instances:,.1f} "
        f"expected, {cost.max_instances} at maximum",
        f"cost: ${cost.min_hourly:,.2f}/h at minimum, ${cost.expected_hourly:,.2f}/h expected "
        f"(${cost.expected_monthly:,.0f} a month), ${cost.max_hourly:,.2f}/h at maximum",
    ]
    serverless = [e for e in plan.endpoints.values() if KINDS[e.kind].serverless]
    if serverless:
        cited = serverless_price_source()
        lines.append(
            f"serverless: {_count(len(serverless), 'endpoint')}, up to "
            f"{sum(e.max_instances for e in serverless)} concurrent invocations together "
            f"({ACCOUNT_NOTE}); prices from {cited['page']}, retrieved {cited['retrieved']}"
        )
    if bound is not None:
        lines.append(
            f"lower bound on the expected cost of any plan of this catalog (LP relaxation, "
            f"HiGHS): ${bound:,.2f}/h; the plan is {cost.expected_hourly / bound:.3f}x that "
            f"(relaxed: {RELAXES})"
        )
    elif bound_note:
        lines.append(bound_note)
    lines.append(
        "throughput per copy: "
        + ", ".join(f"{count} {source}" for source, count in sorted(throughput.items()))
    )
    if defaulted:
        lines.append(
            f"{_count(len(defaulted), 'model')} sized with defaults "
            "(column defaults; docs/planner.md lists them)"
        )
    pooled = [e for e in plan.endpoints.values() if e.pools]
    if pooled:
        lines.append(
            f"fallback pools on {_count(len(pooled), 'endpoint')} ("
            + ", ".join(f"{e.name}: {', '.join(e.fallback_types)}" for e in pooled)
            + "); the cost above is at each endpoint's own type, a fallback costs what it "
            "costs while used (--explain MODEL)"
        )
    return lines


def explain(planner: Planner, name: str) -> str:
    """Why ``name`` got its option: its needs (defaults marked), scores and weights, every
    kind considered with its cheapest option, cost and why it lost, the cheapest options
    of its kind, the types rejected and its placement."""
    known = planner.assessed[name]
    needs, decision = known.needs, known.decision
    p = planner.plan.placements[name]
    endpoint = planner.plan.endpoints[p.endpoint]
    lines = [
        f"{name}: {p.endpoint} ({endpoint.kind}, {endpoint.instance_type})",
        _needs_line(needs, p.concurrency),
    ]
    if needs.work_detail:
        lines.append(_work_line(needs))
    if decision is not None:
        lines.extend(_decision_lines(planner, name, decision))
    lines.extend(_rejected_lines(known.assessment.rejected))
    if name in planner.moves:
        lines.append(f"moved since the plan file: {planner.moves[name]}")
    lines.append(_placement_line(p, endpoint))
    lines.append(_cost_line(p, endpoint))
    lines.extend(_pool_lines(planner, name))
    lines.append(_memory_line(p, needs))
    return "\n".join(lines)


def _marked(needs: Needs, field: str, text: str) -> str:
    """``field=text``, marked when the value is a default."""
    return f"{field}={text}" + (" (default)" if field in needs.defaults else "")


def _request_fields(needs: Needs, concurrency: int) -> list[str]:
    """What one request of the model holds: the KV cache and sequences of a generative
    model (``concurrency``: those its copy runs), prompt and output tokens (an image or a
    recording: its output tokens only, its request line says the rest)."""
    request = [
        _marked(needs, "prompt_tokens", str(needs.prompt_tokens)),
        _marked(needs, "output_tokens", str(needs.output_tokens)),
    ]
    if needs.work_detail:
        output = _marked(needs, "output_tokens", str(needs.output_tokens))
        request = [output] if needs.output_tokens else []
    if needs.generative:
        request = [
            _marked(needs, "kv_cache", f"{needs.kv_bytes_per_token / 1024:.0f} KiB/token"),
            _marked(needs, "context_tokens", str(needs.context_tokens)),
            f"concurrency={concurrency} (chosen; at most {needs.concurrency})",
            *request,
        ]
    return request


def _needs_line(needs: Needs, concurrency: int) -> str:
    """The model's needs, defaults marked (``concurrency``: what its copy runs)."""
    return "needs: " + ", ".join(
        [
            f"task={needs.task}",
            f"weights {needs.weights_gib:.1f} GiB ({needs.dtype})",
            *_request_fields(needs, concurrency),
            f"p50 objective {needs.latency_objective_ms:,.0f} ms",
            _marked(needs, "peak_rpm", f"{needs.peak_rpm:g}"),
            f"active {needs.active_hours:g} h/day",
        ]
    )


def _work_line(needs: Needs) -> str:
    """What one image or recording computes, and the defaults it assumes."""
    assumed = [d for d in needs.defaults if d in WORK_DEFAULTS]
    return f"request: {needs.work_detail}" + (
        f" (defaults: {', '.join(assumed)})" if assumed else ""
    )


def _decision_lines(planner: Planner, name: str, decision: Decision) -> list[str]:
    """The fitness decision of ``name``: scores and weights, reason, scale to zero, cold
    start, why it is alone or serverless, the candidate kinds and its kind's cheapest
    options."""
    p = planner.plan.placements[name]
    endpoint = planner.plan.endpoints[p.endpoint]
    lines = [
        "scores (x weight): "
        + ", ".join(
            f"{axis} {score:.2f} x {decision.weights[axis]:g}" for axis, score in p.scores.items()
        ),
        f"decision: {p.reason}",
        f"scale to zero: {p.scale_to_zero or decision.scale_to_zero_reason}",
    ]
    if p.cold_start_s is not None:
        lines.append(f"cold start: about {p.cold_start_s:,.0f} s ({p.cold_start}; estimated)")
    if not KINDS[endpoint.kind].shared:
        lines.append(f"endpoint of its own: {_why_own(planner, name)}")
    if KINDS[endpoint.kind].serverless:
        lines.append(_serverless_line(p, endpoint.max_instances))
    lines.append("candidates:")
    lines.extend(_candidate_line(c) for c in decision.candidates)
    lines.append(f"cheapest {endpoint.kind} options:")
    known = planner.assessed[name]
    options = known.assessment.options.get(endpoint.kind, [])
    lines.extend(_option_line(o, p, known.needs) for o in options[:6])
    return lines


def _candidate_line(c: Candidate) -> str:
    """One kind the decision considered: its cheapest option, cost and utility, or why it
    has none; why it lost."""
    if c.option is None:
        return f"  {c.kind}: {c.why_not}"
    o = c.option
    return (
        f"  {c.kind}: {_on_type(o)}, "
        f"{o.perf.rpm:,.1f} rpm/copy ({o.perf.source}: {o.perf.detail}), "
        f"{o.max_copies} copies at peak, own cost {usd(monthly(c.expected_hourly))} a "
        f"month, utility {c.utility:.3f}" + (f"; lost: {c.why_not}" if c.why_not else "")
    )


def _option_line(o: Option, p: Placement, needs: Needs) -> str:
    """One option of the model's kind: throughput, latency and monthly cost."""
    own = monthly(o.expected_hourly(p.min_copies, needs.active_hours))
    return (
        f"  {_on_type(o)}: {o.perf.rpm:,.1f} rpm/copy "
        f"({o.perf.source}), latency {o.perf.latency_ms or 0:,.0f} ms at concurrency "
        f"{o.perf.concurrency}, own cost {usd(own)} a month"
    )


def _rejected_lines(rejected: Mapping[str, str]) -> list[str]:
    """The instance types rejected, grouped by reason, the most common first."""
    reasons: dict[str, list[str]] = {}
    for t, why in rejected.items():
        reasons.setdefault(why, []).append(t)
    lines = [f"rejected types ({len(rejected)}):"]
    for why, types in sorted(reasons.items(), key=lambda i: -len(i[1])):
        shown = ", ".join(types[:4]) + (f" and {len(types) - 4} more" if len(types) > 4 else "")
        lines.append(f"  {shown}: {why}")
    return lines


def _placement_line(p: Placement, endpoint: EndpointPlan) -> str:
    """Copies, accelerators and the scaling target of the placement."""
    metric = KINDS[endpoint.kind].scaling_metric
    target = endpoint.scaling_target if endpoint.scaling_target is not None else p.rpm_per_copy
    return (
        f"placement: {p.min_copies}-{p.max_copies} copies {_per_copy(p.accelerators)}, "
        f"scaling target {target:,.1f} {metric}"
    )


def _cost_line(p: Placement, endpoint: EndpointPlan) -> str:
    """The model's expected cost a month by part, and what each part is."""
    return (
        f"cost: {model_cost(p).breakdown()} (own: its option at its planned copies and "
        f"active hours; idle minimum and unfilled share: its share, by own cost, of what "
        f"{endpoint.name} runs that no copy uses, at minimum scale and otherwise)"
    )


def _memory_line(p: Placement, needs: Needs) -> str:
    """Device memory of one copy by part, and the host memory asked of SageMaker."""
    parts = p.memory_parts
    adapters = ""
    if parts.get("adapters_gib"):
        adapters = (
            f" + adapters {parts['adapters_gib']:,.2f} GiB ({needs.lora_slots} LoRA slots "
            f"at rank {needs.lora_rank})"
        )
    return (
        f"memory per copy: {p.device_memory_gib:,.1f} GiB of device memory (weights "
        f"{parts.get('weights_gib', 0):,.1f} + KV pool {parts.get('kv_pool_gib', 0):,.1f} + "
        f"headroom {parts.get('headroom_gib', 0):,.1f} GiB{adapters}; engine memory fraction "
        f"{needs.memory_fraction:g}), host memory {p.memory_mib:,} MiB asked of SageMaker"
    )


def _pool_lines(planner: Planner, name: str) -> list[str]:
    """The fallback pools of ``name``'s endpoint: why each is there, what the model and the
    endpoint take there, and what asked for them."""
    endpoint = planner.plan.endpoints[planner.plan.placements[name].endpoint]
    asking = [m for m in endpoint.models if planner.models[m].fallback_instance_types is not None]
    if not endpoint.pools:
        if not asking:
            return []
        why = (
            f"{endpoint.kind} endpoints take none"
            if not KINDS[endpoint.kind].instance_pools
            else "no other type qualifies"
        )
        return [f"fallback pools: none ({why}; asked by {', '.join(asking)})"]
    lines = [
        f"fallback pools (asked by {', '.join(asking)}; the cost above is at "
        f"{endpoint.instance_type}, a fallback costs what it costs while used):"
    ]
    for pool in endpoint.pools:
        shape = pool.models[name]
        lines.append(
            f"  {pool.priority}. {pool.instance_type}: {pool.reason}; this model "
            f"{shape.min_copies}-{shape.max_copies} copies {_per_copy(shape.accelerators)} "
            f"at {shape.rpm_per_copy:,.1f} rpm/copy; endpoint "
            f"{pool.min_instances}-{pool.max_instances} instances at ${pool.hourly:,.2f}/h"
        )
    return lines


def _serverless_line(p: Placement, max_concurrency: int) -> str:
    """What ``--explain`` says of a serverless placement: memory, concurrency by Little's
    law, cost per request and the account's quotas."""
    seconds = 60 / p.rpm_per_copy if p.rpm_per_copy else 0.0
    return (
        f"serverless: {p.memory_mib} MB, MaxConcurrency {max_concurrency} (Little's law: "
        f"{p.peak_rpm:g} rpm / 60 x {seconds:,.3f} s per request = "
        f"{p.peak_rpm / 60 * seconds:,.2f} concurrent at peak, rounded up); "
        f"${p.cost_per_request or 0:.8f} per request (compute by the second of its memory "
        f"size plus data processed), nothing while idle; {ACCOUNT_NOTE}"
    )


def _why_own(planner: Planner, name: str) -> str:
    """Why a model is on an endpoint no other model shares: the catalog says so
    (isolation), no shared kind can host it, a queue for batch work, or its numbers
    outweigh what an endpoint of its own costs in the choice."""
    model = planner.models[name]
    if model.isolation == "dedicated":
        return f"the catalog asks for it: isolation: dedicated ({model.isolation_reason})"
    p = planner.plan.placements[name]
    if p.reason.startswith("the only option"):
        return f"no catalog constraint asks for it; no other kind can host it: {p.reason}"
    if not opens_endpoint(planner.plan.endpoints[p.endpoint].kind):
        return f"no catalog constraint asks for it; a queue for batch work: {p.reason}"
    return (
        "no catalog constraint asks for it; its numbers outweigh the "
        f"{ENDPOINT_TERM:g} utility an endpoint of its own costs in the choice (quota, "
        f"alarms, stack resources, deploy time): {p.reason}"
    )
