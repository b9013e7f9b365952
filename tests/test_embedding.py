"""The constructs build the same infrastructure in any app: with the project's cdk.json
feature flags or with none (an embedding app), and pass the compliance packs either way."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest

from fm_platform.stacks.inference import InferenceStack
from fm_platform.stacks.training import TrainingStack
from tests.support import fixture_config, nag_findings, new_app, normalized


def permissions(document: dict) -> set[tuple[str, ...]]:
    """A policy document as single permissions (effect, action, resource, principal,
    condition): equal for documents that grant the same, however statements are merged
    or ordered (what the @aws-cdk/aws-iam:minimizePolicies flag changes)."""
    atoms = set()
    for statement in document.get("Statement", []):
        actions = statement.get("Action", [])
        resources = statement.get("Resource", ["*"])
        for action in [actions] if isinstance(actions, str) else actions:
            for resource in resources if isinstance(resources, list) else [resources]:
                atoms.add(
                    (
                        statement["Effect"],
                        action,
                        json.dumps(resource, sort_keys=True),
                        json.dumps(statement.get("Principal"), sort_keys=True),
                        json.dumps(statement.get("Condition"), sort_keys=True),
                    )
                )
    return atoms


def comparable(resources: dict) -> dict:
    """Resources with their IAM and key policy documents as sets of permissions."""
    result = {}
    for logical_id, resource in resources.items():
        properties = dict(resource.get("Properties", {}))
        for name in ("PolicyDocument", "KeyPolicy"):
            if name in properties:
                properties[name] = permissions(properties[name])
        result[logical_id] = {**resource, "Properties": properties}
    return result


def default_stacks(app: cdk.App) -> cdk.App:
    TrainingStack(app, "Training")
    InferenceStack(app, "Inference", config=fixture_config().inference)
    return app


@pytest.fixture(scope="module")
def bare() -> cdk.App:
    return default_stacks(cdk.App())


@pytest.mark.parametrize("stack", ["Training", "Inference"])
@pytest.mark.slow
def test_a_bare_app_builds_what_the_project_app_builds(bare, stack):
    flagged = default_stacks(new_app())
    without = normalized(bare.synth().get_stack_by_name(stack).template)
    with_flags = normalized(flagged.synth().get_stack_by_name(stack).template)
    assert comparable(without["Resources"]) == comparable(with_flags["Resources"])


@pytest.mark.slow
def test_the_default_stacks_pass_the_compliance_packs_in_a_bare_app():
    assert nag_findings(default_stacks(cdk.App())) == []
