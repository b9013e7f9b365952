"""A fleet plan: which endpoint and stack each model is on. The plan is state: committed
as JSON, it pins every assignment for the next re-plan."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PLAN_VERSION = 1
KINDS = ("inference-components", "single-model", "multi-model")


@dataclass
class Placement:
    """One model on its endpoint; per copy: accelerators, host memory, CPU cores."""

    name: str
    endpoint: str
    accelerators: int
    memory_mib: int
    cpu_cores: float
    min_copies: int
    max_copies: int
    fingerprint: dict[str, Any]


@dataclass
class EndpointPlan:
    """One endpoint: its kind (:data:`KINDS`), type, stack, models (in placement order),
    the group its models came from and its instance counts at minimum/maximum scale."""

    name: str
    kind: str
    instance_type: str
    stack: str
    group: str
    models: list[str] = field(default_factory=list)
    min_instances: int = 1
    max_instances: int = 1


@dataclass
class Plan:
    """Endpoints and placements, both in creation order."""

    catalog: str
    endpoints: dict[str, EndpointPlan] = field(default_factory=dict)
    placements: dict[str, Placement] = field(default_factory=dict)

    @property
    def stacks(self) -> list[str]:
        """Stack names in first-use order."""
        return list(dict.fromkeys(e.stack for e in self.endpoints.values()))

    def endpoints_in(self, stack: str) -> list[EndpointPlan]:
        return [e for e in self.endpoints.values() if e.stack == stack]

    def to_json(self) -> str:
        data = {
            "version": PLAN_VERSION,
            "catalog": self.catalog,
            "endpoints": [asdict(e) for e in self.endpoints.values()],
            "placements": [asdict(p) for p in self.placements.values()],
        }
        return json.dumps(data, indent=1) + "\n"

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())


def plan_from_json(text: str, source: str = "plan") -> Plan:
    """A plan from :meth:`Plan.to_json` output; a clear ``ValueError`` when it is not one."""
    try:
        data = json.loads(text)
        if data.get("version") != PLAN_VERSION:
            raise ValueError(f"version must be {PLAN_VERSION}")
        endpoints = [EndpointPlan(**e) for e in data["endpoints"]]
        placements = [Placement(**p) for p in data["placements"]]
        return Plan(
            catalog=data["catalog"],
            endpoints={e.name: e for e in endpoints},
            placements={p.name: p for p in placements},
        )
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(
            f"{source} is not a fleet plan file ({type(error).__name__}: {error}); "
            "delete it to plan from scratch"
        ) from None


def read_plan(path: str | Path) -> Plan | None:
    """The plan at ``path``, or None when there is no file yet."""
    path = Path(path)
    if not path.exists():
        return None
    return plan_from_json(path.read_text(), str(path))


def default_plan_file(catalog: str) -> Path:
    """Where the plan of the catalog at ``catalog`` is kept: ``<catalog>.plan.json``."""
    path = Path(catalog)
    return path.with_name(path.stem + ".plan.json")
