"""Hardware facts per SageMaker ``ml.*`` instance type.

botocore knows which instance types each SageMaker API accepts but not what they contain.
The figures here (vCPUs, memory, accelerators and their memory, local NVMe, EFA interfaces)
come from ``instance_specs.json`` shipped in this package; the file records its sources,
its date and where sources disagree. ``scripts/regenerate_instance_specs.py`` rebuilds it
from EC2 ``DescribeInstanceTypes``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

DATA_FILE = "instance_specs.json"


@dataclass(frozen=True)
class InstanceSpec:
    """What one instance type offers. Memory in MiB; ``accelerator`` is
    ``nvidia-gpu``, ``inferentia``, ``trainium`` or ``none``."""

    instance_type: str
    vcpus: int
    memory_mib: int
    accelerator: str
    accelerator_count: int
    accelerator_memory_mib_total: int
    local_nvme: bool
    efa_interfaces: int

    @property
    def is_accelerated(self) -> bool:
        return self.accelerator != "none"


class UnknownInstanceTypeError(KeyError):
    """An instance type the package data file has no figures for."""


@cache
def _records() -> dict[str, dict]:
    text = resources.files("fm_platform.specs").joinpath(DATA_FILE).read_text()
    return json.loads(text)["instance_types"]


@cache
def instance_spec(instance_type: str) -> InstanceSpec:
    """The figures for ``instance_type``.

    Raises :class:`UnknownInstanceTypeError`, naming how to add the type, when the data
    file does not describe it.
    """
    record = _records().get(instance_type)
    if record is None:
        raise UnknownInstanceTypeError(
            f"instance type {instance_type!r} is not in fm_platform/specs/{DATA_FILE}; "
            "add it with scripts/regenerate_instance_specs.py --add "
            f"{instance_type} (needs EC2 DescribeInstanceTypes access)"
        )
    return InstanceSpec(
        instance_type=instance_type,
        vcpus=record["vcpus"],
        memory_mib=record["memory_mib"],
        accelerator=record["accelerator"],
        accelerator_count=record["accelerator_count"],
        accelerator_memory_mib_total=record["accelerator_memory_mib_total"],
        local_nvme=bool(record["instance_storage_present"]),
        efa_interfaces=record["efa_interfaces"] or 0,
    )
