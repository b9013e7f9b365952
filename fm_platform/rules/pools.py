"""Rules of instance pools: an Inference Components endpoint's fallback instance types
(``ProductionVariant.InstancePools``, at most 5 with the first type: botocore
``InstancePoolList``) and the per-instance-type resources of the components placed on it
(``Specifications``: one per pool type, 2-5 of them; SageMaker Developer Guide, "Deploy to
multiple instance types with instance pools"), and the model a single-model endpoint's
pool runs instead of its variant's (``InstancePool.ModelNameOverride``, botocore shape
``ModelName``)."""

from __future__ import annotations

from collections.abc import Sequence

from fm_platform.rules.capacity import check_fit
from fm_platform.rules.hosting import check_hosting_instance_type
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import member_shape_name, shape_rule


def most_pools() -> int:
    """The most instance pools a variant takes (botocore ``InstancePoolList``)."""
    return shape_rule("InstancePoolList").max or 5


def check_fallback_types(
    problems: Problems,
    *,
    instance_type: str | None,
    fallbacks: Sequence[str],
    reserved: bool,
    field: str = "fallback_instance_types",
) -> None:
    """Fallback types (the key ``field``): hosting types, none repeated (nor the first
    type), at most ``most_pools() - 1``; not with a capacity reservation (which holds one
    type)."""
    for index, fallback in enumerate(fallbacks):
        check_hosting_instance_type(problems, f"{field}[{index}]", fallback)
    problems.check_unique(field, [instance_type, *fallbacks])
    room = most_pools() - 1
    if len(fallbacks) > room:
        problems.add(
            field,
            list(fallbacks),
            f"at most {room} (with instance_type, botocore's InstancePoolList holds "
            f"{most_pools()} pools)",
        )
    if fallbacks and reserved:
        problems.add(
            field,
            list(fallbacks),
            "none with a capacity_reservation: a reservation holds one instance type",
        )


def check_per_type_resources(
    problems: Problems,
    *,
    fallback_types: Sequence[str],
    given: Sequence[tuple[str, int, float | None, int]],
) -> None:
    """Per-instance-type resources ``(type, accelerators, cpu_cores, min_memory_mib)`` of
    a component: each for one of the endpoint's fallback types (the first type takes the
    component's own resources), none twice, each copy fitting one instance of its type."""
    types = [entry[0] for entry in given]
    problems.check_unique("per_instance_type.instance_type", types)
    for index, (instance_type, accelerators, cpu_cores, memory) in enumerate(given):
        if instance_type not in fallback_types:
            problems.add(
                f"per_instance_type[{index}].instance_type",
                instance_type,
                "one of the endpoint's fallback_instance_types: "
                + (", ".join(fallback_types) or "it has none"),
            )
            continue
        check_fit(
            problems,
            f"per_instance_type[{index}]",
            instance_type,
            accelerators=accelerators,
            cpu_cores=cpu_cores,
            min_memory_mib=memory,
        )


def check_pool_model(
    problems: Problems, field: str, *, model_name_override: str | None, has_container: bool
) -> None:
    """A pool's ``model_name_override`` (botocore ``InstancePool.ModelNameOverride``: shape
    ``ModelName``, letters, digits and hyphens, at most 63), not beside a ``container``
    (which creates the pool's model)."""
    problems.check_shape(
        f"{field}.model_name_override",
        model_name_override,
        member_shape_name("InstancePool", "ModelNameOverride"),
    )
    if model_name_override is not None and has_container:
        problems.add(
            f"{field}.model_name_override",
            model_name_override,
            "either a container (a model created for the pool) or the name of an existing "
            "model, not both",
        )


#: The catalog's ``fallback_instance_types`` value that lets the planner choose the types.
AUTO_FALLBACK = "auto"


def check_fallback_request(problems: Problems, field: str, value: object) -> None:
    """A catalog's ``fallback_instance_types``: ``auto`` or a list of distinct hosting
    instance types (the planner picks at most ``most_pools() - 1`` of them)."""
    if value is None or value == AUTO_FALLBACK:
        return
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value) or not value:
        problems.add(field, value, f"{AUTO_FALLBACK!r} or a non-empty list of instance types")
        return
    for index, instance_type in enumerate(value):
        check_hosting_instance_type(problems, f"{field}[{index}]", instance_type)
    problems.check_unique(field, value)
