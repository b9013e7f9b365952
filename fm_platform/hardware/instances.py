"""Hardware facts per SageMaker ``ml.*`` instance type.

botocore knows which instance types each SageMaker API accepts but not what they contain.
The figures here (vCPUs, memory, accelerators and their memory, local NVMe, EFA interfaces)
come from ``instance_specs.json`` shipped in this package; the file records its sources,
its date and where sources disagree. ``python scripts/regenerate_instance_specs.py`` rebuilds it
from EC2 ``DescribeInstanceTypes``. An app can add or override a type with
:func:`register_instance_type` (e.g. a type newer than the package).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

DATA_FILE = "instance_specs.json"


@dataclass(frozen=True)
class InstanceSpec:
    """What one instance type offers. Memory in MiB; ``accelerator`` is
    ``nvidia-gpu``, ``inferentia``, ``trainium`` or ``none``; ``efa_interfaces`` 0 when the
    type has no EFA."""

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


# Types added or overridden by the app (register_instance_type), by name.
_REGISTERED: dict[str, InstanceSpec] = {}
# Families whose types carry accelerators (NVIDIA GPUs, Inferentia, Trainium).
_ACCELERATED_FAMILY = re.compile(r"^ml\.(p|g|gr|inf|trn)[0-9]")


def register_instance_type(spec: InstanceSpec) -> None:
    """Add ``spec``'s figures for its type, or replace the package's, for every check in
    this process (instance fits, EFA subnet sizing, deep health checks)."""
    _REGISTERED[spec.instance_type] = spec
    instance_spec.cache_clear()


def known_instance_types() -> tuple[str, ...]:
    """Every type with figures: the package data file's and the registered ones."""
    return tuple(sorted(set(_records()) | set(_REGISTERED)))


def looks_accelerated(instance_type: str) -> bool:
    """True for names of accelerated families (p, g, gr, inf, trn), known or not."""
    return bool(_ACCELERATED_FAMILY.match(instance_type))


@cache
def _records() -> dict[str, dict]:
    text = resources.files("fm_platform.hardware").joinpath(DATA_FILE).read_text()
    return json.loads(text)["instance_types"]


@cache
def instance_spec(instance_type: str) -> InstanceSpec:
    """The figures for ``instance_type``.

    Raises :class:`UnknownInstanceTypeError`, naming how to add the type, when the data
    file does not describe it.
    """
    if instance_type in _REGISTERED:
        return _REGISTERED[instance_type]
    record = _records().get(instance_type)
    if record is None:
        raise UnknownInstanceTypeError(
            f"instance type {instance_type!r} has no figures in fm_platform/hardware/{DATA_FILE}; "
            "add them with fm_platform.register_instance_type(InstanceSpec(...)), or "
            "regenerate the file from a checkout of the project: python "
            f"scripts/regenerate_instance_specs.py --add {instance_type} (needs EC2 "
            "DescribeInstanceTypes access)"
        )
    return _spec_from_record(instance_type, record)


def _spec_from_record(instance_type: str, record: dict) -> InstanceSpec:
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


def register_instance_types_from_file(path: str | Path) -> tuple[str, ...]:
    """Register every type of a data file in the package's format (e.g. written by
    ``python scripts/regenerate_instance_specs.py --output FILE``); returns their names."""
    records = json.loads(Path(path).read_text())["instance_types"]
    for name, record in records.items():
        register_instance_type(_spec_from_record(name, record))
    return tuple(records)
