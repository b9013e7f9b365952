"""Every way one model could be hosted: per kind, instance type and tensor-parallel degree,
the copy's shape and throughput, and why the other types cannot run it.

Hardware rules: bf16 weights need an NVIDIA GPU of compute capability 8.0 or newer
(Ampere: T4 and V100 have no bf16 and vLLM refuses them) unless the catalog allows fp16
(``allow_fp16``); fp8 needs 8.9 (Ada, Hopper) or newer; Inferentia and Trainium run only
models compiled for Neuron (``neuron_compiled``), and of the quantized ones int8 only;
text generation never runs on CPU types;
``instance_family`` keeps only that family. Candidate types are those with hardware figures
and a price in the plan's region, on which the model's container family has an image in
that region.

Kinds: a kind that refuses the model (:meth:`fm_platform.fleet.deciding.kinds.Kind.refuses`: its
latency class, its request body) gets no options; a kind's own instance-type rule (the
asynchronous endpoint's: not inf1) rejects types for it; and a kind serves the model at the
tighter of its latency objective and the kind's request limit (60 s real-time, 1 hour
asynchronous), so a long request fits an asynchronous endpoint only.

Copy shape on accelerated types: ``tp`` devices, host memory = the weights (at least
2 GiB), CPU cores = half the type's vCPUs per device x ``tp`` (the host keeps room for
SageMaker's agents). A whole-instance copy (single-model and multi-model endpoints) takes
every device of its instance. Only text generation splits a copy over devices (vLLM's
tensor parallelism): an encoder (TEI serves one device), a diffusion pipeline or a speech
model (one worker of the Hugging Face or TorchServe toolkit) runs on one device, so its
copies take one device each and its whole-instance kinds only one-device types.
Multi-model endpoints keep loaded models in host memory and get half of it for models
(the rest: the model server and request buffers); a copy on a CPU type holds its weights
in fp32 (4 bytes per parameter).

A serverless kind has no instance types: its options are the memory sizes the model fits
(:mod:`fm_platform.fleet.sizing.serverless`), named ``serverless-<MiB>MB``; an option's ``price``
is one concurrent invocation busy for an hour (its requests' cost), and its copies at peak
the concurrent invocations Little's law gives. Where it cannot host the model at all (no
prices in the region, text generation, a container without a CPU image, a cold start over
3 minutes, no memory size that fits, a peak over 200 concurrent invocations) the
assessment says why (``unavailable``).
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

from fm_platform.containers.images import MULTI_MODEL_FAMILIES, container_problem
from fm_platform.fleet.deciding.kinds import KINDS, Kind
from fm_platform.fleet.sizing.decode_step import for_device
from fm_platform.fleet.sizing.needs import MemoryParts, Needs, alike_needs, tp_degrees
from fm_platform.fleet.sizing.performance import (
    COMPUTE_EFFICIENCY,
    CPU_EFFICIENCY,
    Performance,
    best_estimate,
    cpu_flops,
    default,
    encode_estimate,
    from_records,
    override,
)
from fm_platform.fleet.sizing.profiles import read_benchmark, shipped_records
from fm_platform.fleet.sizing.serverless import (
    CONTAINER_MIB,
    cold_start_problem,
    concurrency_problem,
    memory_type,
    performance,
    request_seconds,
    request_usd,
    vcpus,
)
from fm_platform.hardware.devices import (
    BF16_MIN_CAPABILITY,
    FP8_MIN_CAPABILITY,
    Device,
    device,
    family,
    vcpu_gflops,
)
from fm_platform.hardware.instances import InstanceSpec, instance_spec
from fm_platform.hardware.prices import hourly_prices
from fm_platform.hardware.serverless_prices import serverless_prices, serverless_regions
from fm_platform.rules.serverless import memory_sizes_mib

#: Share of a multi-model instance's host memory that holds loaded models.
MME_MEMORY_SHARE = 0.5
#: CPU types run encoder models in fp32.
CPU_BYTES_PER_PARAM = 4.0
NEURON = ("inferentia", "trainium")
#: Weight dtypes LMI cannot serve on Neuron: transformers-neuronx quantizes int8 only
#: (``static_int8``; djl-serving ``tnx_user_guide.md``, "Quantization").
NEURON_UNQUANTIZED = ("fp8", "int4")


@dataclass(frozen=True)
class Shape:
    """What one copy requests on its instance: devices, host memory (MiB), CPU cores."""

    accelerators: int
    memory_mib: int
    cpu_cores: float


@dataclass(frozen=True)
class Option:
    """One way to host a model: ``kind`` on ``instance_type`` with copies of ``shape``
    performing ``perf``; ``max_copies`` serve the peak; ``price`` is the instance's USD per
    hour, ``copy_hourly`` one copy's share of it, ``copy_gib`` its device (or, on CPU, host)
    memory, ``parts`` that memory by part (weights, KV pool, headroom)."""

    kind: str
    instance_type: str
    shape: Shape
    perf: Performance
    max_copies: int
    price: float
    copy_hourly: float
    copy_gib: float
    usable_gib: float
    load: float
    parts: MemoryParts

    def expected_hourly(self, min_copies: int, active_hours: float) -> float:
        """USD per hour averaged over a day: the peak copies while active, the minimum
        otherwise; a multi-model copy costs its share of an instance's model memory while
        idle and the larger of that and its traffic share while active; a whole-instance
        kind keeps an instance unless it queues requests (asynchronous); a serverless one
        costs its busy invocations while active and nothing otherwise."""
        return self.hourly_at(self.max_copies, self.load, min_copies, active_hours)

    def hourly_at(
        self, max_copies: int, load: float, min_copies: int, active_hours: float
    ) -> float:
        """:meth:`expected_hourly` of this option at another traffic: ``max_copies`` at
        peak and ``load`` (peak copies, fractional)."""
        a = active_hours / 24
        if KINDS[self.kind].serverless:
            return self.copy_hourly * a * load
        if KINDS[self.kind].pools_memory:
            memory = self.copy_gib / self.usable_gib
            return self.price * ((1 - a) * memory + a * max(memory, load))
        kind = KINDS[self.kind]
        if kind.whole_instance and not kind.queued:
            min_copies = max(1, min_copies)
        return self.copy_hourly * (a * max_copies + (1 - a) * min_copies)


def _sort_minimum(kind: str) -> int:
    """The copies at minimum options are ranked with: one, none for a queued or serverless
    kind."""
    return 0 if KINDS[kind].queued or KINDS[kind].serverless else 1


class PricedOptions(Mapping[str, list[Option]]):
    """Per kind, the options of models ``alike`` (assessed without traffic) at one
    model's ``peak_rpm`` and ``active_hours``, cheapest expected cost first (ties by
    instance type). A kind's list is built when first read; :meth:`cheapest` finds its
    first option without building it (most models need no more). A serverless kind keeps
    the memory sizes whose concurrency at this traffic an endpoint allows; with none it is
    left out, and :attr:`unavailable` says why."""

    def __init__(self, alike: AlikeOptions, peak_rpm: float, active_hours: float) -> None:
        self._alike = alike
        self._peak_rpm = peak_rpm
        self._active_hours = active_hours
        self._built: dict[str, list[Option]] = {}
        self._cheapest: dict[str, Option] = {}
        self._lowest_found: dict[tuple[str, int], tuple[float, Option, int]] = {}
        self.unavailable = dict(alike.unavailable)
        self._kinds: list[str] = []
        self._kept: dict[str, list[Option]] = {}  # serverless kinds: the sizes allowed
        for kind in alike.options:
            if KINDS[kind].serverless:
                raw = alike.options[kind]
                kept = [o for o in raw if self._concurrency_problem(o) is None]
                if not kept:
                    self.unavailable[kind] = self._concurrency_problem(raw[-1]) or ""
                    continue
                self._kept[kind] = kept
            self._kinds.append(kind)

    @property
    def alike(self) -> AlikeOptions:
        """The options of the models alike these are priced from."""
        return self._alike

    def at_traffic(self, option: Option) -> Option:
        """``option`` (one of :meth:`unpriced`) at this traffic: its copies at peak and
        its load, as :meth:`__getitem__` lists it."""
        return _with_traffic(option, self._peak_rpm)

    def cheapest_found(self, kind: str) -> Option | None:
        """:meth:`cheapest` of ``kind`` if it has been asked for, else None."""
        return self._cheapest.get(kind)

    def _concurrency_problem(self, o: Option) -> str | None:
        return concurrency_problem(max(1, math.ceil(self._peak_rpm / o.perf.rpm)))

    def __getitem__(self, kind: str) -> list[Option]:
        built = self._built.get(kind)
        if built is None:
            low, hours = _sort_minimum(kind), self._active_hours
            built = [_with_traffic(o, self._peak_rpm) for o in self.unpriced(kind)]
            built.sort(key=lambda o: (o.expected_hourly(low, hours), o.instance_type))
            self._built[kind] = built
        return built

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def cheapest(self, kind: str) -> Option:
        """``self[kind][0]`` (equal to it), priced without building the other options."""
        found = self._cheapest.get(kind)
        if found is None:
            first = self._lowest(kind, _sort_minimum(kind))[1]
            found = self._cheapest[kind] = _with_traffic(first, self._peak_rpm)
        return found

    def lowest_hourly(self, kind: str, min_copies: int) -> float:
        """The least expected cost (:meth:`Option.expected_hourly`) of an option of
        ``kind`` with ``min_copies``."""
        return self._lowest(kind, min_copies)[0]

    def _lowest(self, kind: str, low: int) -> tuple[float, Option, int]:
        """The least expected cost of ``kind``'s options at ``low`` copies at minimum,
        and the first option (in assessed order) of those that cost it on the cheapest
        type, with its index in the kind's options: in ascending order of a floor under
        each option's cost (:meth:`AlikeOptions.by_floor`), up to the first whose floor
        exceeds the best found."""
        found = self._lowest_found.get((kind, low))
        if found is None:
            found = self._lowest_found[(kind, low)] = self._search(kind, low)
        return found

    def _search(self, kind: str, low: int) -> tuple[float, Option, int]:
        """:meth:`_lowest`'s search, each option priced as :meth:`Option.hourly_at` prices
        it (the same arithmetic, with what is the same for every option of the kind taken
        out of the loop)."""
        peak, a = self._peak_rpm, self._active_hours / 24
        k = KINDS[kind]
        serverless, pools = k.serverless, k.pools_memory
        # the copies at peak are at least one: the cost is at least the floor times this
        scale = 1.0 if pools else a + (1 - a) * low
        idle = (1 - a) * (max(1, low) if k.whole_instance and not k.queued else low)
        best = math.inf
        limit = math.inf  # a floor above which no option can cost less than the best
        first: tuple[str, int, Option] | None = None
        beaten = pools or (not serverless and (a > 0 or idle > 0))
        ranked = self._alike.frontier(kind) if beaten else self._alike.by_floor(kind)
        for floor, index, o, memory in ranked:
            if floor * scale > limit:
                break
            if serverless and self._concurrency_problem(o) is not None:
                continue
            load = peak / o.perf.rpm
            if serverless:
                cost = o.copy_hourly * a * load
            elif pools:
                cost = o.price * ((1 - a) * memory + a * max(memory, load))
            else:
                cost = o.copy_hourly * (a * max(1, math.ceil(load)) + idle)
            # ties: the cheapest type, then the first, as a stable sort
            if (
                first is None
                or cost < best
                or (cost == best and (o.instance_type, index) < first[:2])
            ):
                best, first = cost, (o.instance_type, index, o)
                limit = best * (1 + 1e-9)
        assert first is not None
        return best, first[2], first[1]

    def unpriced(self, kind: str) -> list[Option]:
        """``kind``'s options as assessed without traffic (unsorted; what
        :meth:`__getitem__` would price): one list shared by the models alike, not to
        be changed."""
        kept = self._kept.get(kind)
        if kept is not None:
            return kept
        if kind not in self._kinds:
            raise KeyError(kind)
        return self._alike.options[kind]


@dataclass(frozen=True)
class Assessment:
    """All options of one model by kind (cheapest first), the types rejected, with
    reasons (``type -> reason``), the kinds whose request limit tightened the model's
    objective (``kind -> seconds``) and the kinds without instance types that cannot host
    it (serverless), with why (``kind -> reason``)."""

    options: PricedOptions
    rejected: dict[str, str]
    limited: dict[str, float]
    unavailable: dict[str, str]


@dataclass
class AlikeOptions:
    """What models alike but for their name, traffic and hours share: their options per
    kind without traffic, the types rejected and the kinds that tightened the objective
    (as :class:`Assessment`), and their options priced per (peak rpm, active hours)."""

    options: dict[str, list[Option]] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    limited: dict[str, float] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    priced: dict[tuple[float, float], PricedOptions] = field(default_factory=dict)
    floors: dict[str, list[tuple[float, int, Option, float]]] = field(default_factory=dict)
    frontiers: dict[str, list[tuple[float, int, Option, float]]] = field(default_factory=dict)

    def by_floor(self, kind: str) -> list[tuple[float, int, Option, float]]:
        """The options of ``kind`` (with their index and their copy's share of the usable
        memory) by ascending floor: the price of one
        copy, or of a multi-model copy's memory share; at any traffic an option costs at
        least its floor (times a factor of the kind and hours alone,
        :meth:`PricedOptions.cheapest`), as :meth:`Option.expected_hourly` prices it. A
        serverless option has no floor (it costs its load, which may be below one copy):
        0 for each, so the search reads them all."""
        found = self.floors.get(kind)
        if found is None:
            pools, serverless = KINDS[kind].pools_memory, KINDS[kind].serverless
            found = self.floors[kind] = sorted(
                (
                    0.0
                    if serverless
                    else o.price * o.copy_gib / o.usable_gib
                    if pools
                    else o.copy_hourly,
                    i,
                    o,
                    o.copy_gib / o.usable_gib,
                )
                for i, o in enumerate(self.options[kind])
            )
        return found

    def frontier(self, kind: str) -> list[tuple[float, int, Option, float]]:
        """:meth:`by_floor` of a kind that is not serverless without the options another
        beats at any traffic, so never the cheapest nor tied with it
        (:meth:`Option.hourly_at`; "less" by more than rounding). Priced per copy: one
        whose copy costs less and serves at least as many requests a minute costs less
        wherever a copy costs anything. Multi-model: one whose memory share costs less and
        whose requests cost less (price over requests a minute) costs less always."""
        found = self.frontiers.get(kind)
        if found is None:
            ranked = self.by_floor(kind)
            pools = KINDS[kind].pools_memory
            found = self.frontiers[kind] = []
            # of the options with a lower floor: the most rpm, the least price per rpm
            fastest, cheapest, below = 0.0, math.inf, 0
            for entry in ranked:
                while ranked[below][0] < entry[0] * (1 - 1e-9):
                    o = ranked[below][2]
                    fastest = max(fastest, o.perf.rpm)
                    cheapest = min(cheapest, o.price / o.perf.rpm)
                    below += 1
                o = entry[2]
                if pools:
                    if cheapest >= o.price / o.perf.rpm * (1 - 1e-9):
                        found.append(entry)
                elif o.perf.rpm > fastest:
                    found.append(entry)
        return found


#: The fields of :class:`Needs` that :func:`hardware_problem` reads.
_HARDWARE_FIELDS = operator.attrgetter(
    "instance_family", "neuron_compiled", "dtype", "generative", "allow_fp16", "container"
)
_hardware_problems: dict[tuple, str | None] = {}


def hardware_problem(needs: Needs, spec: InstanceSpec, region: str) -> str | None:
    """Why ``needs`` cannot run on ``spec`` in ``region`` at all, or None: the device, then
    whether the model's container has an image for the type's hardware in the region.
    Computed once per type, region and the needs' :data:`_HARDWARE_FIELDS` (what it
    reads)."""
    key = (_HARDWARE_FIELDS(needs), spec.instance_type, region)
    if key not in _hardware_problems:
        _hardware_problems[key] = _device_problem(needs, spec) or container_problem(
            needs.container, spec.accelerator, region
        )
    return _hardware_problems[key]


_problems_in: dict[tuple, tuple[str | None, ...]] = {}


def _hardware_problems_in(needs: Needs, region: str) -> tuple[str | None, ...]:
    """:func:`hardware_problem` on each priced type of ``region`` (in :func:`_specs`
    order), once per region and the needs' :data:`_HARDWARE_FIELDS`."""
    key = (_HARDWARE_FIELDS(needs), region)
    found = _problems_in.get(key)
    if found is None:
        found = _problems_in[key] = tuple(
            hardware_problem(needs, spec, region) for spec, _ in _specs(region)
        )
    return found


def _device_problem(needs: Needs, spec: InstanceSpec) -> str | None:
    name = spec.instance_type
    if needs.instance_family is not None and family(name) != needs.instance_family:
        return f"not the preferred family {needs.instance_family}"
    if spec.accelerator in NEURON:
        if not needs.neuron_compiled:
            return "Neuron types run only models compiled for Neuron (neuron_compiled: true)"
        if needs.dtype in NEURON_UNQUANTIZED:
            return (
                f"LMI on Neuron (transformers-neuronx) quantizes int8 weights only, not "
                f"{needs.dtype}"
            )
        return None
    if not spec.is_accelerated:
        if needs.generative:
            return "text generation is not served on CPU types"
        return None
    dev = device(spec)
    capability = dev.capability if dev else None
    if capability is None:
        return None
    if needs.dtype == "bf16" and capability < BF16_MIN_CAPABILITY and not needs.allow_fp16:
        return (
            f"{dev.model} (compute capability {capability:g}) has no bf16; "  # type: ignore[union-attr]
            "set allow_fp16 to run the model as fp16"
        )
    if needs.dtype == "fp8" and capability < FP8_MIN_CAPABILITY:
        return f"{dev.model} (compute capability {capability:g}) has no fp8"  # type: ignore[union-attr]
    return None


def _devices(count: int) -> str:
    """``1 device``, ``4 devices``."""
    return "1 device" if count == 1 else f"{count} devices"


def _device_gib(spec: InstanceSpec) -> float:
    return spec.accelerator_memory_mib_total / max(1, spec.accelerator_count) / 1024


def _measured_rows(needs: Needs, spec: InstanceSpec, tp: int) -> tuple[tuple, str] | None:
    """Rows measured on this very type and degree that size the copy, with their source:
    the catalog's benchmark file's, else the shipped rows of its architecture; None
    without such rows."""
    if needs.benchmark is not None:
        own = tuple(
            r
            for r in read_benchmark(*needs.benchmark)
            if r.instance_type == spec.instance_type and r.tensor_parallel == tp
        )
        if own:
            return own, "benchmark"
    if needs.architecture is not None:
        shipped = shipped_records(needs.architecture, spec.instance_type, tp)
        if shipped:
            return shipped, "measured"
    return None


def _performance(
    needs: Needs, spec: InstanceSpec, tp: int, fits, usable: float
) -> Performance | None:
    """The copy's throughput (module :mod:`fm_platform.fleet.sizing.performance`); ``fits``
    (concurrency -> bool) says whether a copy fits the ``usable`` GiB."""
    if needs.rpm_override is not None:
        return override(needs, fits) if fits(1) else None
    measured = _measured_rows(needs, spec, tp)
    if measured is not None:
        return from_records(needs, measured[0], measured[1], fits)
    return _device_performance(needs, spec, tp, fits, usable)


def _device_performance(
    needs: Needs, spec: InstanceSpec, tp: int, fits, usable: float
) -> Performance | None:
    """What the type's devices (on CPU, its vCPUs) give a copy without measured rows."""
    if not spec.is_accelerated:
        gflops, flops = vcpu_gflops(spec), cpu_flops(spec)
        if flops is None or not fits(1):
            return default(needs, fits) if fits(1) else None
        what = f"{spec.vcpus} vCPUs ({gflops:g} GFLOPS each x {CPU_EFFICIENCY})"
        return encode_estimate(needs, flops, what)
    dev = device(spec)
    if dev is None:
        return default(needs, fits) if fits(1) else None
    return _estimate(needs, dev, tp, fits)


def _estimate(needs: Needs, dev: Device, tp: int, fits) -> Performance | None:
    """The hardware estimate of a copy on ``tp`` devices ``dev``; ``fits`` (concurrency ->
    bool) says whether a copy fits their usable memory."""
    if not needs.generative:
        if not fits(1):
            return None
        tflops = dev.tflops_for(needs.dtype)
        efficiency = needs.compute_efficiency or COMPUTE_EFFICIENCY
        flops = tp * tflops * 1e12 * efficiency
        what = f"{tp} x {dev.model} ({tflops:g} {needs.dtype} TFLOPS x {efficiency:.2f})"
        perf = encode_estimate(needs, flops, what, tp * dev.bandwidth_gbps, for_device(dev))
        return perf if perf.meets(needs.latency_objective_ms) else None
    return best_estimate(needs, dev, tp, fits)


@cache
def _type_problem(kind: str, instance_type: str) -> str | None:
    return KINDS[kind].type_problem(instance_type)


class _Copy(NamedTuple):
    """One copy of a model on an instance type: what it requests, how it performs, its
    device (or, on CPU, host) memory, the memory usable for it and that memory by part (a
    named tuple: built for every type and degree of every request shape)."""

    shape: Shape
    perf: Performance
    gib: float
    usable: float
    parts: MemoryParts


@dataclass(frozen=True)
class _OnDevices:
    """What ``tp`` devices of one kind, model and memory give a copy on any type that has
    them: the memory usable for it, whether it fits at a concurrency, and the throughput
    without rows measured on the type (None: it misses the objective)."""

    usable: float
    fits: Callable[[int], bool]
    perf: Performance | None


@cache
def _device_classes(region: str) -> dict[str, int]:
    """Per priced type in ``region``, the index of the first type with the same devices
    (kind, model, number and memory): the g5 sizes from xlarge to 16xlarge share one
    A10G."""
    first: dict[tuple, int] = {}
    return {
        spec.instance_type: first.setdefault(
            (spec.accelerator, device(spec), spec.accelerator_count, _device_gib(spec)), i
        )
        for i, (spec, _) in enumerate(_specs(region))
    }


class _Shared:
    """What the options of models alike share across instance types and kinds, computed
    once per :func:`_assess_alike` in ``region``: one copy's memory per (needs, devices,
    concurrency), its parts, per (needs, devices of a type, degree) what the devices give
    (:class:`_OnDevices`) or why there is no copy, and per (needs, type, devices) the copy
    or why there is none."""

    def __init__(self, region: str) -> None:
        self._classes = _device_classes(region)
        self._gib: dict[tuple[int, int, int], float] = {}
        self._parts: dict[tuple[int, int, int], MemoryParts] = {}
        self._on_devices: dict[tuple[int, int | str, int], _OnDevices | str] = {}
        self._copies: dict[tuple[int, str, int, float], _Copy | str] = {}

    def copy_gib(self, needs: Needs, tp: int, concurrency: int) -> float:
        key = (id(needs), tp, concurrency)
        found = self._gib.get(key)
        if found is None:
            found = self._gib[key] = needs.copy_gib(tp, concurrency)
        return found

    def parts(self, needs: Needs, tp: int, concurrency: int) -> MemoryParts:
        key = (id(needs), tp, concurrency)
        found = self._parts.get(key)
        if found is None:
            found = self._parts[key] = needs.parts(tp, concurrency)
        return found

    def on_devices(self, needs: Needs, spec: InstanceSpec, tp: int) -> _OnDevices | str:
        """What ``tp`` devices of ``spec`` give a copy (:func:`_on_devices`)."""
        # a type without a price in the region (a test's) is a class of its own
        key = (id(needs), self._classes.get(spec.instance_type, spec.instance_type), tp)
        found = self._on_devices.get(key)
        if found is None:
            found = self._on_devices[key] = _on_devices(needs, spec, tp, self)
        return found

    def accelerated(self, needs: Needs, spec: InstanceSpec, tp: int) -> _Copy | str:
        """A copy on ``tp`` devices of ``spec`` (:func:`_accelerated_copy`)."""
        key = (id(needs), spec.instance_type, tp, 0.0)
        found = self._copies.get(key)
        if found is None:
            found = self._copies[key] = _accelerated_copy(needs, spec, tp, self)
        return found

    def cpu(self, needs: Needs, spec: InstanceSpec, share: float) -> _Copy | str:
        """A copy on CPU type ``spec`` given ``share`` of its memory (:func:`_cpu_copy`)."""
        key = (id(needs), spec.instance_type, 0, share)
        found = self._copies.get(key)
        if found is None:
            found = self._copies[key] = _cpu_copy(needs, spec, share)
        return found


def _cpu_copy(needs: Needs, spec: InstanceSpec, share: float) -> _Copy | str:
    """A copy holding fp32 weights in ``share`` of CPU type ``spec``'s memory, or why it
    does not fit or misses the objective."""
    usable = spec.memory_mib / 1024 * share
    gib = needs.params_b * 1e9 * CPU_BYTES_PER_PARAM / 2**30
    perf = _performance(needs, spec, 0, lambda c: gib <= usable, usable)
    if perf is None:
        return f"a copy needs {gib:.1f} GiB, {usable:.1f} GiB of host memory usable"
    if not perf.meets(needs.latency_objective_ms):
        return f"{perf.latency_ms:,.0f} ms misses the objective"
    shape = Shape(0, max(1, math.ceil(gib * 1024)), 1.0)
    return _Copy(shape, perf, gib, usable, MemoryParts(gib, 0.0, 0.0, gib))


def _on_devices(needs: Needs, spec: InstanceSpec, tp: int, shared: _Shared) -> _OnDevices | str:
    """What ``tp`` devices of ``spec`` give a copy, or why they cannot hold one: the degree
    does not divide the attention heads, or one copy does not fit their memory."""
    # Neuron's libraries pad attention heads up to the degree: the Neuron SDK runs
    # Llama-2-70B's 64 heads over 24 NeuronCores (aws-neuron-sdk, about-neuron/
    # benchmarks/inf2/throughput_data_decoder.csv)
    if not needs.tp_allowed(tp) and spec.accelerator not in NEURON:
        return f"{_devices(tp)} do not divide {needs.attention_heads} attention heads"
    usable = _device_gib(spec) * needs.memory_fraction * tp

    def fits(concurrency: int) -> bool:
        return shared.copy_gib(needs, tp, concurrency) <= usable

    if not fits(1):
        return (
            f"one copy needs {shared.copy_gib(needs, tp, 1):.1f} GiB, {_devices(tp)} "
            f"{'has' if tp == 1 else 'have'} {usable:.1f} GiB usable"
        )
    if needs.rpm_override is not None:
        return _OnDevices(usable, fits, override(needs, fits))
    return _OnDevices(usable, fits, _device_performance(needs, spec, tp, fits, usable))


def _accelerated_copy(needs: Needs, spec: InstanceSpec, tp: int, shared: _Shared) -> _Copy | str:
    """A copy on ``tp`` devices of ``spec`` (module docstring), or why there is none: the
    devices cannot hold one (:func:`_on_devices`), the copy does not fit the host's
    memory, or it misses the objective. Rows measured on the type win over what its
    devices give."""
    on = shared.on_devices(needs, spec, tp)
    if isinstance(on, str):
        return on
    count = spec.accelerator_count
    host_mib = needs.host_mib()
    if host_mib > spec.memory_mib * tp // count:
        return f"host memory per copy {host_mib} MiB exceeds the share of {_devices(tp)}"
    measured = None if needs.rpm_override is not None else _measured_rows(needs, spec, tp)
    perf = on.perf if measured is None else from_records(needs, *measured, on.fits)
    if perf is None:
        miss = "misses" if tp == 1 else "miss"
        return f"{_devices(tp)} {miss} the p50 objective of {needs.latency_objective_ms:,.0f} ms"
    shape = Shape(tp, host_mib, max(1.0, spec.vcpus / count * tp / 2))
    gib = shared.copy_gib(needs, tp, perf.concurrency)
    return _Copy(shape, perf, gib, on.usable, shared.parts(needs, tp, perf.concurrency))


def _option(kind: str, instance_type: str, price: float, copy_hourly: float, copy: _Copy) -> Option:
    """An option of ``copy`` without traffic (no load, one copy at peak), built without
    the frozen dataclass's ``__init__`` (it sets each field through ``object.__setattr__``:
    an eighth of the time to assess a model)."""
    option = object.__new__(Option)
    option.__dict__.update(
        kind=kind,
        instance_type=instance_type,
        shape=copy.shape,
        perf=copy.perf,
        max_copies=1,
        price=price,
        copy_hourly=copy_hourly,
        copy_gib=copy.gib,
        usable_gib=copy.usable,
        load=0.0,
        parts=copy.parts,
    )
    return option


def _degrees(needs: Needs, kind: Kind, count: int) -> tuple[int, ...] | str:
    """The devices a copy of ``kind`` may take on a type with ``count``: every device of a
    whole-instance copy, else each tensor-parallel degree (text generation). A model of
    another task runs on one device (module docstring): a shared copy takes one, and a
    whole-instance copy only a one-device type; else why not."""
    if needs.generative:
        return (count,) if kind.whole_instance else tp_degrees(count)
    if kind.whole_instance and count > 1:
        return (
            f"a {needs.task} model runs on one device (its pipeline has no tensor "
            f"parallelism and its server one worker): a copy of the whole instance would use "
            f"1 of its {count} devices"
        )
    return (1,)


def _options_on(
    needs: Needs, kind: Kind, spec: InstanceSpec, price: float, reasons: list, shared: _Shared
) -> list[Option]:
    """The options of ``kind`` on ``spec`` (without traffic: ``needs.peak_rpm`` is 0); why
    each degree or the type cannot host it is appended to ``reasons``."""
    problem = _type_problem(kind.name, spec.instance_type)
    if problem is not None:
        reasons.append(problem)
        return []
    if not spec.is_accelerated:
        if not kind.cpu:
            return []
        copies = [(0, shared.cpu(needs, spec, MME_MEMORY_SHARE if kind.pools_memory else 0.5))]
    elif not kind.accelerated:
        return []
    else:
        degrees = _degrees(needs, kind, spec.accelerator_count)
        if isinstance(degrees, str):
            reasons.append(degrees)
            return []
        copies = [(tp, shared.accelerated(needs, spec, tp)) for tp in degrees]
    whole = kind.whole_instance or not spec.is_accelerated
    found = []
    for tp, copy in copies:
        if isinstance(copy, str):
            reasons.append(copy)
            continue
        share = price if whole else price * (tp / spec.accelerator_count)
        found.append(_option(kind.name, spec.instance_type, price, share, copy))
    return found


def _serverless_problem(needs: Needs, region: str) -> str | None:
    """Why no memory size of a serverless endpoint can host ``needs`` at all, or None."""
    if serverless_prices(region) is None:
        cited = ", ".join(serverless_regions())
        return (
            f"no Serverless Inference prices for {region} (fm_platform/hardware/"
            f"serverless_prices.json cites {cited} only)"
        )
    if needs.generative:
        return "text generation is not served on serverless endpoints (CPU only, no GPUs)"
    if needs.instance_family is not None:
        return f"instance_family {needs.instance_family} asks for instances"
    if needs.uncompressed_weights:
        return (
            "its weights_uri is a prefix of uncompressed files, which a serverless endpoint "
            "cannot read (it reads a model.tar.gz only): name a .tar.gz to allow serverless"
        )
    container = container_problem(needs.container, "none")
    if container is not None:
        return container
    return cold_start_problem(needs)


def _serverless_options(
    needs: Needs, kind: Kind, region: str, result: AlikeOptions, options: dict[str, list[Option]]
) -> None:
    """The memory sizes ``needs`` fits and meets its objective on, as ``options`` of
    ``kind`` (without traffic), or in ``result.unavailable`` why none."""
    problem = _serverless_problem(needs, region)
    prices = serverless_prices(region)
    if problem is not None or prices is None:
        result.unavailable[kind.name] = problem or ""
        return
    gib = needs.params_b * 1e9 * CPU_BYTES_PER_PARAM / 2**30
    reasons = []
    for memory in memory_sizes_mib():
        usable = (memory - CONTAINER_MIB) / 1024
        if gib > usable:
            reasons.append(
                f"a copy needs {gib:.1f} GiB (fp32), {memory} MB leaves {usable:.1f} GiB "
                f"beside the container's {CONTAINER_MIB} MiB"
            )
            continue
        perf = performance(needs, memory)
        if perf is None or not perf.meets(needs.latency_objective_ms):
            latency = f"{perf.latency_ms:,.0f} ms" if perf and perf.latency_ms else "no figures"
            reasons.append(f"{memory} MB: {latency} misses the objective")
            continue
        busy = request_usd(prices, needs, memory, perf) * 3600 / request_seconds(perf)
        options.setdefault(kind.name, []).append(
            Option(
                kind.name,
                memory_type(memory),
                Shape(0, memory, round(vcpus(memory), 2)),
                perf,
                1,
                busy,
                busy,
                gib,
                usable,
                0.0,
                MemoryParts(gib, 0.0, 0.0, gib),
            )
        )
    if kind.name not in options:
        result.unavailable[kind.name] = reasons[-1]


@cache
def _specs(region: str) -> tuple[tuple[InstanceSpec, float], ...]:
    prices = hourly_prices(region)
    return tuple((instance_spec(t), p) for t, p in sorted(prices.items(), key=lambda i: i[1]))


def _kind_needs(needs: Needs, unavailable: dict[str, str]) -> list[tuple[Kind, Needs]]:
    """The kinds that may host ``needs``, each with the needs it serves: the objective at
    most the kind's request limit (module docstring); kinds of one limit share one needs
    (so what :class:`_Shared` computes for one serves the others). A multi-model endpoint
    runs one container for all its models, the PyTorch one: a model of another container
    has none, and ``unavailable`` says why."""
    kinds = []
    tightened: dict[float, Needs] = {}
    for kind in KINDS.values():
        if kind.max_params_b is not None and needs.params_b > kind.max_params_b:
            continue
        if kind.pools_memory and needs.generative:
            continue
        if kind.pools_memory and needs.container not in MULTI_MODEL_FAMILIES:
            unavailable[kind.name] = (
                f"container {needs.container} does not serve a multi-model endpoint, which "
                f"runs the {' or '.join(MULTI_MODEL_FAMILIES)} container for all its models "
                "(framework: pytorch)"
            )
            continue
        if kind.refuses(needs.batch, needs.payload_mb) is not None:
            continue
        limit_ms = kind.max_request_s * 1000
        if needs.latency_objective_ms > limit_ms:
            served = tightened.get(limit_ms)
            if served is None:
                served = tightened[limit_ms] = dataclasses.replace(
                    needs, latency_objective_ms=limit_ms
                )
            kinds.append((kind, served))
        else:
            kinds.append((kind, needs))
    return kinds


def _with_traffic(o: Option, peak_rpm: float) -> Option:
    """``o`` (assessed without traffic) serving ``peak_rpm``: its copies at peak and its
    load (a shallow copy: ``dataclasses.replace`` is slow at this volume)."""
    option = object.__new__(Option)
    load = peak_rpm / o.perf.rpm
    option.__dict__.update(o.__dict__, max_copies=max(1, math.ceil(load)), load=load)
    return option


def _assess_alike(needs: Needs, region: str) -> AlikeOptions:
    """Every option of ``needs`` without its traffic (``peak_rpm`` 0): what models alike but
    for their name, traffic and hours share, computed afresh (:func:`alike_options` keeps
    it per process)."""
    options: dict[str, list[Option]] = {}
    result = AlikeOptions(options)
    kinds = _kind_needs(needs, result.unavailable)
    result.limited = {
        kind.name: kind.max_request_s for kind, served in kinds if served is not needs
    }
    for kind, kind_needs in kinds:
        if kind.serverless:
            _serverless_options(kind_needs, kind, region, result, options)
    kinds = [(kind, kind_needs) for kind, kind_needs in kinds if not kind.serverless]
    shared = _Shared(region)
    for (spec, price), problem in zip(
        _specs(region), _hardware_problems_in(needs, region), strict=True
    ):
        if problem is not None:
            result.rejected[spec.instance_type] = problem
            continue
        reasons: list[str] = []
        found = False
        for kind, kind_needs in kinds:
            on = _options_on(kind_needs, kind, spec, price, reasons, shared)
            if on:
                options.setdefault(kind.name, []).extend(on)
                found = True
        if not found:
            result.rejected[spec.instance_type] = reasons[0] if reasons else "no kind uses it"
    return result


#: The options of models alike per (alike needs, region), computed once per process
#: (:func:`alike_options`).
_ALIKE_OPTIONS: dict[tuple[Needs, str], AlikeOptions] = {}


def alike_options(alike: Needs, region: str) -> AlikeOptions:
    """Every option of models alike (``alike``: their
    :func:`~fm_platform.fleet.sizing.needs.alike_needs`) without their traffic, computed once
    per process."""
    key = (alike, region)
    found = _ALIKE_OPTIONS.get(key)
    if found is None:
        found = _ALIKE_OPTIONS[key] = _assess_alike(alike, region)
    return found


def priced_assessment(alike: AlikeOptions, needs: Needs) -> Assessment:
    """The :func:`assess` of ``needs`` from the options of the models alike: priced at its
    traffic and hours, shared by the models alike at the same traffic and hours."""
    traffic = (needs.peak_rpm, needs.active_hours)
    priced = alike.priced.get(traffic)
    if priced is None:
        priced = alike.priced[traffic] = PricedOptions(alike, *traffic)
    return Assessment(priced, alike.rejected, alike.limited, priced.unavailable)


def assess(needs: Needs, region: str) -> Assessment:
    """Every option of ``needs`` per kind (cheapest expected cost first, with the kind's
    minimum of one copy, none for a queued or serverless kind) and every type rejected
    outright, with its reason; a serverless kind whose peak needs more concurrent
    invocations than an endpoint allows has none, and says why. Models alike at the same
    traffic and hours share their priced options."""
    return priced_assessment(alike_options(alike_needs(needs), region), needs)


def family_types(region: str) -> set[str]:
    """The instance families with priced types in ``region`` (a catalog may prefer one)."""
    return {family(spec.instance_type) for spec, _ in _specs(region)}
