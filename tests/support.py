"""Helpers shared by the tests: apps with the project's feature flags, nag reports,
normalised templates."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from fm_platform.config import AppConfig, load_config
from fm_platform.core.compliance import apply_compliance_packs

ROOT = Path(__file__).resolve().parent.parent
#: The tests' own app configuration: the training example and the demo fleet that
#: fmp-config.json ships (library types hold no demo: an empty InferenceConfig builds none).
APP_CONFIG_FILE = ROOT / "tests" / "fixtures" / "app-config.json"
# The feature flags of cdk.json (not its "config" entry: tests pass their own configuration).
CDK_CONTEXT: dict[str, Any] = {
    key: value
    for key, value in json.loads((ROOT / "cdk.json").read_text())["context"].items()
    if key.startswith("@")
}

_ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def new_app(**kwargs: Any) -> cdk.App:
    """An App with the feature flags of cdk.json, as `cdk synth` would build it."""
    context = {**CDK_CONTEXT, **kwargs.pop("context", {})}
    return cdk.App(context=context, **kwargs)


def fixture_config() -> AppConfig:
    """The configuration in :data:`APP_CONFIG_FILE`, checked as the app checks it."""
    return load_config(json.loads(APP_CONFIG_FILE.read_text()))


def nag_findings(app: cdk.App) -> list[str]:
    """Run the project's three cdk-nag packs on ``app`` and return every open finding as
    ``"<rule> at <construct path>"`` (empty when the app is clean)."""
    apply_compliance_packs(app)
    try:
        assembly = app.synth()
    except Exception as error:  # noqa: BLE001 - the report below says what failed
        if "ValidationFailed" not in str(error):
            raise
        assembly = None
    return open_findings(Path(app.outdir) if assembly is None else Path(assembly.directory))


def open_findings(outdir: Path) -> list[str]:
    """Every open finding of the cdk-nag report in the assembly directory ``outdir``, as
    ``"<rule> at <construct path>"`` (empty without a report)."""
    report_file = outdir / "validation-report.json"
    if not report_file.exists():
        return []
    report = json.loads(report_file.read_text())
    return [
        f"{violation['ruleName']} at {construct['constructPath']}"
        for plugin in report["pluginReports"]
        for violation in plugin.get("violations", [])
        for construct in violation["violatingConstructs"]
    ]


def normalized(template: dict[str, Any]) -> dict[str, Any]:
    """``template`` with asset hashes replaced, so a CDK upgrade or an unrelated asset
    change does not churn snapshot lines."""
    text = _ASSET_HASH.sub("<asset-hash>", json.dumps(template, sort_keys=True))
    return json.loads(text)


def stateful_changes(
    pinned: dict[str, str], resources: dict[str, Any], types: set[str]
) -> list[str]:
    """In words, how ``resources`` (a template's) differ from the ``pinned`` stateful
    logical IDs (logical ID to type): which retained resource CloudFormation would REPLACE,
    which is new, and which is not retained."""
    current = {lid: r for lid, r in resources.items() if r["Type"] in types}
    changes = []
    for logical_id, kind in pinned.items():
        if logical_id in current:
            continue
        same_type = [lid for lid, r in current.items() if r["Type"] == kind and lid not in pinned]
        now = f"; now there is {', '.join(same_type)}" if same_type else ""
        changes.append(
            f"{logical_id} ({kind}) would be REPLACED: its logical ID is gone, so "
            f"CloudFormation would create a new one and orphan the retained original{now}"
        )
    for logical_id, resource in current.items():
        path = resource.get("Metadata", {}).get("aws:cdk:path", "?")
        if logical_id not in pinned:
            changes.append(
                f"{logical_id} ({resource['Type']} at {path}) is new: pin it if intended"
            )
        elif (
            resource.get("DeletionPolicy") != "Retain"
            or resource.get("UpdateReplacePolicy") != "Retain"
        ):
            changes.append(
                f"{logical_id} ({resource['Type']}) is not retained: deleting or replacing "
                "the stack would delete its data"
            )
    return changes


def references(node: Any) -> set[str]:
    """Logical IDs that ``node`` (part of a template) names with Ref, Fn::GetAtt or
    Fn::Sub's ``${...}``."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                found.add(value)
            elif key == "Fn::GetAtt":
                target = value[0] if isinstance(value, list) else value.split(".")[0]
                found.add(target)
            elif key == "Fn::Sub":
                text = value[0] if isinstance(value, list) else value
                found.update(m.split(".")[0] for m in re.findall(r"\$\{([^}!]+)\}", text))
            found |= references(value)
    elif isinstance(node, list):
        for item in node:
            found |= references(item)
    return found


def dependencies(resources: dict[str, dict], logical_id: str) -> set[str]:
    """Every resource of the template that ``logical_id`` needs, transitively."""
    seen: set[str] = set()
    todo = [logical_id]
    while todo:
        resource = resources[todo.pop()]
        depends_on = resource.get("DependsOn", [])
        direct = references(resource.get("Properties", {}))
        direct |= set([depends_on] if isinstance(depends_on, str) else depends_on)
        for name in direct & set(resources) - seen:
            seen.add(name)
            todo.append(name)
    return seen


def deleted_but_needed(resources: dict[str, Any]) -> set[str]:
    """``"<retained> needs <deleted>"`` for every resource a retained one needs that the
    stack's deletion would delete (a retained FSx file system in a deleted subnet makes the
    deletion fail)."""
    retained = {n for n, r in resources.items() if r.get("DeletionPolicy") == "Retain"}
    return {
        f"{name} needs {needed}"
        for name in retained
        for needed in dependencies(resources, name) - retained
    }
