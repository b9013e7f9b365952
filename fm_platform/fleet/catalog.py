"""The model catalog: what a platform team knows about each model it hosts.

A catalog is YAML or JSON::

    name: fleet                 # stack name prefix; by default "fleet"
    models:
      - name: llama-3-8b-chat
        params_b: 8.03          # billions of parameters (or memory_gib instead)
        dtype: bf16             # fp32, fp16, bf16, fp8, int8, int4; by default bf16
        framework: lmi          # container family; by default lmi
        peak_rpm: 120           # requests per minute at peak; by default 60
        active_hours: 10        # hours a day with traffic; by default 24
        latency_p50_ms: 800     # or latency_class: strict | standard | relaxed
        cold_start_tolerant: false
        isolation: shared       # or dedicated, with isolation_reason
        instance_family: g5     # optional preference
        tenant: acme            # optional
        group: chat-pool        # optional: models sharing a group share an endpoint

Every problem is collected and reported at once, each under its path, e.g.
``models[12].params_b=-1: must be > 0``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fm_platform.mapping import dataclass_values, list_of
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import shape_rule

#: Bytes per parameter of each weight dtype.
DTYPE_BYTES = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
LATENCY_CLASSES = ("strict", "standard", "relaxed")
ISOLATION = ("shared", "dedicated")
#: A p50 objective at or under this many milliseconds is a strict latency objective.
STRICT_P50_MS = 250
#: At or under this many active hours a day a model counts as idle most of the day.
IDLE_HOURS = 4.0
#: Model names also name inference components and (prefixed) endpoints: keep room.
MAX_NAME_LENGTH = 48


@dataclass(frozen=True, kw_only=True)
class ModelEntry:
    """One model of the catalog (see the module docstring for the file format).

    rpm_per_copy: requests per minute one copy serves at the latency objective; by
        default 60. The copy maximum is ``ceil(peak_rpm / rpm_per_copy)``.
    """

    name: str
    params_b: float | None = None
    memory_gib: float | None = None
    dtype: str = "bf16"
    framework: str = "lmi"
    peak_rpm: float = 60.0
    rpm_per_copy: float = 60.0
    active_hours: float = 24.0
    latency_p50_ms: int | None = None
    latency_class: str = "standard"
    cold_start_tolerant: bool = False
    isolation: str = "shared"
    isolation_reason: str | None = None
    instance_family: str | None = None
    tenant: str | None = None
    group: str | None = None

    @property
    def strict_latency(self) -> bool:
        """A strict objective: ``latency_class: strict`` or a p50 of at most 250 ms."""
        if self.latency_p50_ms is not None:
            return self.latency_p50_ms <= STRICT_P50_MS
        return self.latency_class == "strict"

    @property
    def idle_most_of_day(self) -> bool:
        """Active at most 4 hours a day."""
        return self.active_hours <= IDLE_HOURS

    @property
    def dedicated(self) -> bool:
        """Needs its own endpoint: dedicated isolation or a strict latency objective."""
        return self.isolation == "dedicated" or self.strict_latency

    def fingerprint(self) -> dict[str, Any]:
        """The fields that decide placement; a committed plan records them."""
        return {
            "params_b": self.params_b,
            "memory_gib": self.memory_gib,
            "dtype": self.dtype,
            "framework": self.framework,
            "dedicated": self.dedicated,
            "instance_family": self.instance_family,
            "group": self.group,
        }


@dataclass(frozen=True)
class Catalog:
    """A validated catalog: its ``name`` (stack prefix) and ``models`` in file order."""

    name: str
    models: tuple[ModelEntry, ...]


@dataclass(frozen=True, kw_only=True)
class _CatalogFile:
    models: list
    name: str = "fleet"


def _check_model(problems: Problems, where: str, m: ModelEntry, families: set[str]) -> None:
    path = where.rstrip(".")
    if shape_rule("EndpointName").problem(m.name) is not None or len(m.name) > MAX_NAME_LENGTH:
        problems.add(
            f"{path}.name",
            m.name,
            f"must be 1-{MAX_NAME_LENGTH} letters, digits and single hyphens, starting and "
            "ending with a letter or digit",
        )
    if (m.params_b is None) == (m.memory_gib is None):
        problems.add(path, m.name, "give exactly one of params_b or memory_gib")
    for key in ("params_b", "memory_gib", "rpm_per_copy"):
        value = getattr(m, key)
        if value is not None and value <= 0:
            problems.add(f"{path}.{key}", value, "must be > 0")
    if m.peak_rpm < 0:
        problems.add(f"{path}.peak_rpm", m.peak_rpm, "must be >= 0")
    if not 0 <= m.active_hours <= 24:
        problems.add(f"{path}.active_hours", m.active_hours, "must be between 0 and 24")
    if m.latency_p50_ms is not None and m.latency_p50_ms <= 0:
        problems.add(f"{path}.latency_p50_ms", m.latency_p50_ms, "must be > 0")
    problems.check_choice(f"{path}.dtype", m.dtype, DTYPE_BYTES)
    problems.check_choice(f"{path}.latency_class", m.latency_class, LATENCY_CLASSES)
    problems.check_choice(f"{path}.isolation", m.isolation, ISOLATION)
    if m.isolation == "dedicated" and not m.isolation_reason:
        problems.add(f"{path}.isolation_reason", None, "say why the model needs its own endpoint")
    if m.instance_family is not None and m.instance_family not in families:
        problems.check_choice(f"{path}.instance_family", m.instance_family, sorted(families))
    if m.group is not None and m.dedicated:
        why = "isolation: dedicated" if m.isolation == "dedicated" else "a strict latency objective"
        problems.add(
            f"{path}.group",
            m.group,
            f"conflicts with {why}, which needs the model's own endpoint; drop one of them",
        )


def _model(families: set[str]):
    def build(problems: Problems, where: str, data: Any) -> ModelEntry | None:
        before = len(problems.messages)
        values = dataclass_values(problems, where, data, ModelEntry)
        if len(problems.messages) > before or "name" not in values:
            return None
        model = ModelEntry(**values)
        _check_model(problems, where, model, families)
        return model

    return build


def catalog_from_data(data: Any, families: set[str]) -> Catalog:
    """A :class:`Catalog` from parsed YAML/JSON; ``families`` are the instance families a
    model may prefer. Raises one ``ValueError`` listing every problem."""
    problems = Problems("catalog")
    top = dataclass_values(problems, "", data if data is not None else {}, _CatalogFile)
    models = list_of(problems, "models", top.get("models", []), _model(families))
    name = top.get("name", "fleet")
    if isinstance(name, str) and shape_rule("EndpointName").problem(name) is not None:
        problems.add("name", name, "must be letters, digits and single hyphens")
    problems.check_unique("models[].name", (m.name for m in models))
    problems.raise_if_any()
    return Catalog(name=name, models=models)


def load_catalog(path: str | Path, families: set[str]) -> Catalog:
    """Read and validate a catalog file (``.json`` as JSON, anything else as YAML)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ValueError(f"cannot read catalog {path}: {error.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as error:
        raise ValueError(
            f"catalog {path} is not valid {path.suffix[1:] or 'YAML'}: {error}"
        ) from None
    if not isinstance(data, Mapping):
        raise ValueError(f"catalog {path}: must be a mapping with a 'models' list")
    return catalog_from_data(data, families)
