"""Do a model's copies fit the instances they are placed on?

SageMaker places every copy of an inference component on a single instance, so a copy's
accelerators, CPU cores and minimum memory must each fit what one instance offers
(:func:`check_fit`). The copies of every model on an endpoint must also fit its instances
together (:func:`shortfalls`): with their minimum copies on ``max_instance_count``
instances (else the minimum can never be placed), and with their initial copies on
``initial_instance_count`` instances (else managed instance scaling first has to add
instances). The figures come from :mod:`fm_platform.hardware.instances` (EC2 hardware
facts). SageMaker keeps part of the host memory and CPU for its own agents and does not
publish how much, and a copy cannot span instances, so these are necessary conditions: a
request that passes can still fail to place when it asks for nearly everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fm_platform.hardware.instances import InstanceSpec, UnknownInstanceTypeError, instance_spec
from fm_platform.rules.problems import Problems


def _field(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def known_spec(instance_type: str | None) -> InstanceSpec | None:
    """The figures of ``instance_type``, or None when it is unknown or unset (the instance
    type rule reports an unknown type)."""
    if instance_type is None:
        return None
    try:
        return instance_spec(instance_type)
    except UnknownInstanceTypeError:
        return None


def check_fit(
    problems: Problems,
    field_prefix: str,
    instance_type: str | None,
    *,
    accelerators: int | None,
    cpu_cores: float | None,
    min_memory_mib: int | None,
) -> InstanceSpec | None:
    """Record every way one copy does not fit one ``instance_type``.

    Field names are ``<field_prefix>.accelerators``, ``.cpu_cores``, ``.min_memory_mib``
    (the bare names when ``field_prefix`` is empty). Returns the instance's figures, or
    None when the type is unknown or unset (nothing is checked then).
    """
    spec = known_spec(instance_type)
    if spec is None:
        return None
    if accelerators is not None:
        if accelerators > 0 and not spec.is_accelerated:
            problems.add(
                _field(field_prefix, "accelerators"),
                accelerators,
                f"{instance_type} has no accelerators; use 0 or an accelerated instance type",
            )
        elif accelerators > spec.accelerator_count:
            problems.add(
                _field(field_prefix, "accelerators"),
                accelerators,
                f"at most {spec.accelerator_count} ({spec.accelerator} devices on one "
                f"{instance_type})",
            )
    if cpu_cores is not None and cpu_cores > spec.vcpus:
        problems.add(
            _field(field_prefix, "cpu_cores"),
            cpu_cores,
            f"at most {spec.vcpus} (vCPUs of one {instance_type})",
        )
    if min_memory_mib is not None and min_memory_mib > spec.memory_mib:
        problems.add(
            _field(field_prefix, "min_memory_mib"),
            min_memory_mib,
            f"at most {spec.memory_mib} (MiB of host memory on one {instance_type})",
        )
    return spec


@dataclass(frozen=True, kw_only=True)
class CopyDemand:
    """What one model's copies reserve on an endpoint.

    name: the component's name. accelerators, cpu_cores (None: not reserved),
    min_memory_mib: per copy (None: unknown). min_copies / initial_copies: the fewest
    copies it keeps and the copies it starts with (None: unknown).
    """

    name: str
    accelerators: int | None
    cpu_cores: float | None
    min_memory_mib: int | None
    min_copies: int | None
    initial_copies: int | None


_RESOURCES = (
    # (label, per-copy attribute, per-instance attribute)
    ("accelerators", "accelerators", "accelerator_count"),
    ("CPU cores", "cpu_cores", "vcpus"),
    ("MiB of memory", "min_memory_mib", "memory_mib"),
)


def _number(value: float) -> str:
    return f"{value:g}"


def shortfalls(
    demands: Sequence[CopyDemand],
    instance_type: str | None,
    instances: int | None,
    copies: str,
) -> list[str]:
    """For each resource that ``copies`` (``"min_copies"`` or ``"initial_copies"``) of
    ``demands`` need beyond ``instances`` x one ``instance_type``, the arithmetic, e.g.
    ``"accelerators: a 2 x 1 + b 1 x 2 = 4 > 1 instances x 2 (ml.g5.12xlarge) = 2"``. Empty
    when everything fits, or when the type or instance count is unknown."""
    spec = known_spec(instance_type)
    if spec is None or instances is None:
        return []
    found = []
    for label, per_copy, per_instance in _RESOURCES:
        terms, total = [], 0.0
        for demand in demands:
            count, amount = getattr(demand, copies), getattr(demand, per_copy)
            if count and amount:
                terms.append(f"{demand.name} {count} x {_number(amount)}")
                total += count * amount
        capacity = instances * getattr(spec, per_instance)
        if total > capacity:
            found.append(
                f"{label}: {' + '.join(terms)} = {_number(total)} > {instances} instances x "
                f"{getattr(spec, per_instance)} ({instance_type}) = {capacity}"
            )
    return found


def check_min_copies_fit(
    problems: Problems,
    field: str,
    demands: Sequence[CopyDemand],
    instance_type: str | None,
    max_instance_count: int | None,
) -> None:
    """Record on ``field`` (with the last demand's minimum copies as the value) that the
    minimum copies of ``demands`` need more than ``max_instance_count`` instances of
    ``instance_type`` hold, with the arithmetic of each resource that runs short."""
    missing = shortfalls(demands, instance_type, max_instance_count, "min_copies")
    if missing:
        problems.add(
            field,
            demands[-1].min_copies,
            min_copies_shortfall(max_instance_count, missing),
        )


def min_copies_shortfall(max_instance_count: int | None, missing: Sequence[str]) -> str:
    """What to say when the minimum copies need more than the endpoint's instances."""
    return (
        "the minimum copies of the endpoint's models need more than its "
        f"max_instance_count ({max_instance_count}) instances hold: "
        + "; ".join(missing)
        + ". Raise the endpoint's max_instance_count, use a larger instance type or "
        "lower the models' minimum copies"
    )


class CopyTotals:
    """Running totals of the copies placed on one endpoint, so that a placement costs the
    same however many models the endpoint already has; :meth:`initial_shortfalls` gives
    the same arithmetic as :func:`shortfalls` over every placement so far."""

    def __init__(self, instance_type: str | None, initial_instances: int | None) -> None:
        self.demands: list[CopyDemand] = []
        self._spec = known_spec(instance_type)
        self._instance_type = instance_type
        self._instances = initial_instances
        self._initial = {label: 0.0 for label, _, _ in _RESOURCES}

    def add(self, demand: CopyDemand) -> None:
        """Place ``demand``."""
        self.demands.append(demand)
        count = demand.initial_copies
        for label, per_copy, _ in _RESOURCES:
            amount = getattr(demand, per_copy)
            if count and amount:
                self._initial[label] += count * amount

    def initial_exceeds(self) -> bool:
        """True when the initial copies placed so far need more than the initial
        instances hold."""
        if self._spec is None or self._instances is None:
            return False
        return any(
            self._initial[label] > self._instances * getattr(self._spec, per_instance)
            for label, _, per_instance in _RESOURCES
        )

    def initial_shortfalls(self) -> list[str]:
        """The arithmetic of each resource the initial copies run short of."""
        return shortfalls(self.demands, self._instance_type, self._instances, "initial_copies")
