"""Does a model's resource request fit one instance of a type?

SageMaker places every copy of an inference component on a single instance, so a copy's
accelerators, CPU cores and minimum memory must each fit what one instance offers. The
figures come from :mod:`fm_platform.specs.instances` (EC2 hardware facts). SageMaker keeps
part of the host memory and CPU for its own agents and does not publish how much, so a
request that passes this check can still fail to place when it asks for nearly the whole
instance; the check catches the requests that can never fit.
"""

from __future__ import annotations

from fm_platform.specs.instances import InstanceSpec, UnknownInstanceTypeError, instance_spec
from fm_platform.validation import Problems, is_unresolved


def _field(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def check_fit(
    problems: Problems,
    field_prefix: str,
    instance_type: str,
    *,
    accelerators: int,
    cpu_cores: float | None,
    min_memory_mib: int | None,
) -> InstanceSpec | None:
    """Record in ``problems`` every way the request does not fit one ``instance_type``.

    Field names are ``<field_prefix>.accelerators``, ``.cpu_cores``, ``.min_memory_mib``
    (or the bare names when ``field_prefix`` is empty). An instance type the data file does
    not describe is reported on ``<field_prefix>.instance_type`` with how to add it.
    Returns the instance's figures, or None when the type is unknown or unresolved.
    """
    if is_unresolved(instance_type):
        return None
    try:
        spec = instance_spec(instance_type)
    except UnknownInstanceTypeError as error:
        problems.add(_field(field_prefix, "instance_type"), instance_type, error.args[0])
        return None
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
            f"at most {spec.accelerator_count} ({spec.accelerator} devices on one {instance_type})",
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
