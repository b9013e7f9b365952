"""Do the copies of an Inference Components endpoint's models fit its instances?

Each copy reserves accelerators, CPU cores (when requested) and host memory on one instance.
The sum over every model of copies x reservation per copy must fit the instances' total:
with the models' minimum copies on ``max_instance_count`` instances (else the minimum can
never be placed), and with their initial copies on ``initial_instance_count`` instances
(else managed instance scaling first has to add instances). Totals are a necessary
condition only: a copy cannot span instances, and SageMaker keeps some memory and CPU for
itself, so a sum that fits can still fail to place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aws_cdk import Annotations
from constructs import Construct

from fm_platform.specs.instances import InstanceSpec, UnknownInstanceTypeError, instance_spec
from fm_platform.validation import Problems, is_unresolved

if TYPE_CHECKING:
    from fm_platform.constructs.inference.ic_endpoint import EndpointReference


@dataclass(frozen=True, kw_only=True)
class CopyDemand:
    """What one model's copies reserve on an endpoint.

    name: the component's name. accelerators, cpu_cores (None: not reserved),
    min_memory_mib: per copy. min_copies / initial_copies: the fewest copies it keeps and
    the copies it starts with.
    """

    name: str
    accelerators: int
    cpu_cores: float | None
    min_memory_mib: int
    min_copies: int
    initial_copies: int


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
    instance_type: str,
    instances: int | None,
    copies: str,
) -> list[str]:
    """For each resource that ``copies`` (``"min_copies"`` or ``"initial_copies"``) of
    ``demands`` need beyond ``instances`` x one ``instance_type``, the arithmetic, e.g.
    ``"accelerators: a 2 x 1 + b 1 x 2 = 4 > 1 instances x 2 (ml.g5.12xlarge) = 2"``. Empty
    when everything fits, or when the type or instance count is unknown or unresolved."""
    spec = _spec(instance_type)
    if spec is None or instances is None or is_unresolved(instances):
        return []
    found = []
    for label, per_copy, per_instance in _RESOURCES:
        terms, total = [], 0.0
        for demand in demands:
            count, amount = getattr(demand, copies), getattr(demand, per_copy)
            if amount is None or is_unresolved(amount) or is_unresolved(count):
                continue
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
    instance_type: str,
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
            "the minimum copies of the endpoint's models need more than its "
            f"max_instance_count ({max_instance_count}) instances hold: "
            + "; ".join(missing)
            + ". Raise the endpoint's max_instance_count, use a larger instance type or "
            "lower the models' minimum copies",
        )


def place_copies(scope: Construct, endpoint: EndpointReference, demand: CopyDemand) -> None:
    """Record ``demand`` in ``endpoint.placements``; warn on ``scope`` (warning
    ``fm_platform:initialCopiesExceedInstances``) when with it the initial copies stop
    fitting the endpoint's ``initial_instance_count`` instances: placing them then waits
    for managed instance scaling to add instances."""
    placements, initial = endpoint.placements, endpoint.initial_instance_count
    before = shortfalls(placements, endpoint.instance_type, initial, "initial_copies")
    placements.append(demand)
    after = shortfalls(placements, endpoint.instance_type, initial, "initial_copies")
    if after and not before:
        Annotations.of(scope).add_warning_v2(
            "fm_platform:initialCopiesExceedInstances",
            "the initial copies of the models on the endpoint need more than its "
            f"initial_instance_count ({initial}) instances hold: {'; '.join(after)}. "
            "Managed instance scaling adds instances before every copy runs; raise "
            "initial_instance_count to start them at once.",
        )


def _spec(instance_type: str) -> InstanceSpec | None:
    if is_unresolved(instance_type):
        return None
    try:
        return instance_spec(instance_type)
    except UnknownInstanceTypeError:
        return None  # reported by the instance type check
