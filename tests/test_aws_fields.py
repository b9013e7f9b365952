"""Every SageMaker and Application Auto Scaling field the apps set is read against its
documentation: each property path of the default app, the every-option fixture, the
example catalog's fleet stacks and the EKS example is mapped to its member in botocore's
service model, and a member whose documentation states a condition, a format or a default
needs a row of docs/aws-fields.md saying how the project honours it. A row no app needs any
more fails too, and so does a row whose quote botocore no longer says."""

from __future__ import annotations

import functools
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from aws_cdk.assertions import Template
from botocore.model import ListShape, ServiceModel, Shape, StructureShape

from fm_platform.app import build_app
from fm_platform.config import load_config
from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.adapters import planning_catalog
from fm_platform.fleet.models.catalog import load_catalog
from fm_platform.fleet.outputs.plan import read_plan
from fm_platform.fleet.outputs.serving import annotate
from fm_platform.fleet.placing.planner import plan_fleet
from fm_platform.stacks.fleet import fleet_stacks
from fm_platform.stacks.inference import InferenceStack
from tests.conftest import CloudAssembly
from tests.support import ROOT, new_app

PAGE = ROOT / "docs" / "aws-fields.md"
EVERY_OPTION = ROOT / "tests" / "fixtures" / "every-endpoint-option.json"
EKS_EXAMPLE = ROOT / "examples" / "training-eks.json"
CATALOG = ROOT / "examples" / "catalog.yaml"

#: The API call whose input CloudFormation passes each resource type's properties to.
OPERATIONS = {
    "AWS::SageMaker::Cluster": ("sagemaker", "CreateCluster"),
    "AWS::SageMaker::ClusterSchedulerConfig": ("sagemaker", "CreateClusterSchedulerConfig"),
    "AWS::SageMaker::ComputeQuota": ("sagemaker", "CreateComputeQuota"),
    "AWS::SageMaker::Endpoint": ("sagemaker", "CreateEndpoint"),
    "AWS::SageMaker::EndpointConfig": ("sagemaker", "CreateEndpointConfig"),
    "AWS::SageMaker::InferenceComponent": ("sagemaker", "CreateInferenceComponent"),
    "AWS::SageMaker::Model": ("sagemaker", "CreateModel"),
    "AWS::ApplicationAutoScaling::ScalableTarget": (
        "application-autoscaling",
        "RegisterScalableTarget",
    ),
    "AWS::ApplicationAutoScaling::ScalingPolicy": ("application-autoscaling", "PutScalingPolicy"),
}
#: Properties the Create* input does not hold: the (service, operation, member) that
#: documents them, or None for a property only CloudFormation has.
ELSEWHERE: dict[str, tuple[str, str, str] | None] = {
    # Rolling updates happen on update: UpdateInferenceComponent takes the policy.
    "AWS::SageMaker::InferenceComponent.DeploymentConfig": (
        "sagemaker",
        "UpdateInferenceComponent",
        "DeploymentConfig",
    ),
    # CloudFormation's name for the target (ServiceNamespace, ResourceId, ScalableDimension
    # in the API, which PutScalingPolicy's input documents as members of their own).
    "AWS::ApplicationAutoScaling::ScalingPolicy.ScalingTargetId": None,
}
#: The words a condition ("Required when", "only", "not both"), a format ("in the form",
#: "starts with") or a default ("Defaults to", "if unspecified") is stated with.
CONDITION = re.compile(
    r"\b(?:required|must|only|cannot|can't|can not|not both|default|defaults"
    r"|if (?:not specified|unspecified|no value)|treated as|make sure|don't|do not|omit"
    r"|valid values|maximum length|less than|greater than|starts with|ends with|in the form"
    r"|formats?|no\b[^.]*\bcan)\b",
    re.IGNORECASE,
)
_INTRINSIC = re.compile(r"^(?:Ref|Fn::\w+)$")
# A reference to code in a row's last column: `path.py::name`.
_CODE_REFERENCE = re.compile(r"`((?:fm_platform|tests|scripts)/[\w/]+\.py)::(\w+)`")


@dataclass(frozen=True)
class Row:
    """One row of docs/aws-fields.md."""

    field: str
    says: str
    honoured: str


@functools.cache
def _input(service: str, operation: str) -> StructureShape:
    """The input shape of ``operation`` in botocore's model of ``service``."""
    model: ServiceModel = botocore.session.get_session().get_service_model(service)
    shape = model.operation_model(operation).input_shape
    assert isinstance(shape, StructureShape)
    return shape


def documentation(shape: Shape) -> str:
    """A member's botocore documentation as plain text on one line."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", shape.documentation or ""))
    return re.sub(r"\s+", " ", text).strip()


def conditions(shape: Shape) -> list[str]:
    """The sentences of ``shape``'s documentation that state a condition, format or default."""
    sentences = re.split(r"(?<=[.!?])\s+", documentation(shape))
    return [sentence for sentence in sentences if CONDITION.search(sentence)]


def _member(shape: StructureShape, path: str, name: str) -> Shape | None:
    """The member ``name`` of ``shape`` (``path`` names it), or where :data:`ELSEWHERE` says
    botocore documents it; None for a CloudFormation-only property."""
    if path in ELSEWHERE:
        elsewhere = ELSEWHERE[path]
        if elsewhere is None:
            return None
        service, operation, member = elsewhere
        return _input(service, operation).members[member]
    return shape.members.get(name)


def _walk(node: Any, shape: Shape, path: str, found: dict[str, Shape], unknown: set[str]) -> None:
    is_intrinsic = isinstance(node, dict) and len(node) == 1 and _INTRINSIC.match(next(iter(node)))
    if is_intrinsic:
        return
    if isinstance(shape, StructureShape) and isinstance(node, dict):
        for name, value in node.items():
            member_path = f"{path}.{name}"
            member = _member(shape, member_path, name)
            if member is None:
                if member_path not in ELSEWHERE:
                    unknown.add(member_path)
                continue
            found[member_path] = member
            _walk(value, member, member_path, found, unknown)
    elif isinstance(shape, ListShape) and isinstance(node, list):
        for item in node:
            _walk(item, shape.member, f"{path}[]", found, unknown)


def emitted(*templates: dict[str, Any]) -> tuple[dict[str, Shape], set[str]]:
    """Every property path of the SageMaker and Application Auto Scaling resources of
    ``templates`` with its botocore member (maps such as a container's environment are one
    field: their keys are data), and the properties botocore has no member for."""
    found: dict[str, Shape] = {}
    unknown: set[str] = set()
    for template in templates:
        for resource in template.get("Resources", {}).values():
            kind = resource["Type"]
            if kind.startswith(("AWS::SageMaker::", "AWS::ApplicationAutoScaling::")):
                if kind not in OPERATIONS:
                    unknown.add(kind)
                    continue
                shape = _input(*OPERATIONS[kind])
                _walk(resource.get("Properties", {}), shape, kind, found, unknown)
    return found, unknown


def rows(text: str) -> dict[str, Row]:
    """The table of docs/aws-fields.md: field, what AWS says, how the project honours it."""
    found = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`AWS::"):
            field = cells[0].strip("`")
            found[field] = Row(field, cells[1].strip('"'), cells[2])
    return found


def _says(row: Row, member: Shape) -> bool:
    """Whether the row quotes something and every fragment of its quote (split at "...")
    is in the member's documentation."""
    doc = documentation(member)
    fragments = [part.strip() for part in row.says.split("...") if part.strip()]
    return bool(fragments) and all(fragment in doc for fragment in fragments)


def problems(fields: dict[str, Shape], unknown: set[str], table: dict[str, Row]) -> list[str]:
    """What is wrong between the fields an app sets and the table: a property botocore does
    not document, a flagged field without a row, a row whose quote AWS no longer says, a row
    that does not say how the project honours the field."""
    found = [
        f"{path}: no member in botocore's model; map it in ELSEWHERE of {Path(__file__).name}"
        for path in sorted(unknown)
    ]
    for path, member in sorted(fields.items()):
        said = conditions(member)
        row = table.get(path)
        if said and row is None:
            quoted = " / ".join(f'"{sentence}"' for sentence in said)
            found.append(
                f"{path}: botocore says {quoted}; add a row to docs/aws-fields.md saying how "
                "the project honours it (the rule, the test, or why it does not apply)"
            )
        elif row is not None and not _says(row, member):
            found.append(
                f"{path}: botocore no longer says {row.says!r} (it says "
                f"{documentation(member)!r}); update the row and check the project still "
                "honours it"
            )
        elif row is not None and not row.honoured:
            found.append(f"{path}: the row does not say how the project honours it")
    return found


def _templates_of(app: Any) -> dict[str, dict[str, Any]]:
    return {stack.stack_name: stack.template for stack in app.synth().stacks}


@pytest.fixture(scope="module")
def table() -> dict[str, Row]:
    return rows(PAGE.read_text())


@pytest.fixture(scope="module")
def every_option() -> dict[str, dict[str, Any]]:
    app = new_app()
    config = load_config(json.loads(EVERY_OPTION.read_text()))
    stack = InferenceStack(app, "EveryOption", config=config.inference)
    return {"EveryOption": Template.from_stack(stack).to_json()}


@pytest.fixture(scope="module")
def eks_example() -> dict[str, dict[str, Any]]:
    """The EKS example's stacks (HyperPod on EKS with every add-on, task governance)."""
    app = new_app()
    build_app(app, load_config(json.loads(EKS_EXAMPLE.read_text())))
    return _templates_of(app)


@pytest.fixture(scope="module")
def catalog_fleet() -> dict[str, dict[str, Any]]:
    """The example catalog's fleet stacks, as `cdk synth -c catalog=examples/catalog.yaml`
    plans them (from its plan file, which is not rewritten)."""
    previous = read_plan(CATALOG.with_name("catalog.plan.json"))
    assert previous is not None
    catalog = load_catalog(CATALOG, family_types(previous.region), previous.region)
    plan = plan_fleet(planning_catalog(catalog), previous, region=previous.region)
    app = new_app()
    fleet_stacks(app, annotate(plan, catalog), catalog)
    return _templates_of(app)


def test_every_flagged_field_of_the_default_app_and_the_every_option_fixture_has_a_row(
    default_assembly: CloudAssembly,
    every_option: dict[str, Any],
    eks_example: dict[str, Any],
    table: dict[str, Row],
) -> None:
    fields, unknown = emitted(
        *default_assembly.templates.values(), *every_option.values(), *eks_example.values()
    )
    assert len(fields) > 100
    found = problems(fields, unknown, table)
    assert not found, "\n".join(found)


@pytest.mark.slow  # synthesizes the example catalog's fleet (about ten seconds)
def test_every_flagged_field_of_the_example_catalog_has_a_row_and_no_row_is_stale(
    default_assembly: CloudAssembly,
    every_option: dict[str, Any],
    eks_example: dict[str, Any],
    catalog_fleet: dict[str, Any],
    table: dict[str, Row],
) -> None:
    fields, unknown = emitted(*catalog_fleet.values())
    found = problems(fields, unknown, table)
    assert not found, "\n".join(found)
    every_field, _ = emitted(
        *default_assembly.templates.values(),
        *every_option.values(),
        *eks_example.values(),
        *catalog_fleet.values(),
    )
    stale = sorted(set(table) - set(every_field))
    assert stale == [], "docs/aws-fields.md has rows for fields no app sets any more: remove them"


def test_every_code_a_row_names_exists(table: dict[str, Row]) -> None:
    missing = [
        f"{row.field}: {path}::{name}"
        for row in table.values()
        for path, name in _CODE_REFERENCE.findall(row.honoured)
        if not (ROOT / path).exists()
        or not re.search(rf"^\s*(?:def|class) {name}\b|^{name}\b", (ROOT / path).read_text(), re.M)
    ]
    assert missing == []
    assert len(table) > 40


def test_a_flagged_field_without_a_row_is_named_with_what_aws_says() -> None:
    config = {"RoutingConfig": {"PrefixAwareRoutingConfig": {"PrefixLength": 1}}}
    template = {
        "Resources": {
            "Config": {
                "Type": "AWS::SageMaker::EndpointConfig",
                "Properties": {"ProductionVariants": [config], "Unheard": {"Ref": "X"}},
            }
        }
    }
    fields, unknown = emitted(template)
    field = "AWS::SageMaker::EndpointConfig.ProductionVariants[].RoutingConfig"
    reported = problems(fields, unknown, {})
    assert reported[0] == (
        "AWS::SageMaker::EndpointConfig.Unheard: no member in botocore's model; map it in "
        "ELSEWHERE of test_aws_fields.py"
    )
    assert reported[-1] == (
        f'{field}.PrefixAwareRoutingConfig.PrefixLength: botocore says "The maximum length '
        'of the prefix used for routing decisions." / "Required when RoutingStrategy is '
        'PREFIX_AWARE ."; add a row to docs/aws-fields.md saying how the project honours it '
        "(the rule, the test, or why it does not apply)"
    )
    says = Row(f"{field}.PrefixAwareRoutingConfig.PrefixLength", "Optional.", "a rule")
    assert "no longer says 'Optional.'" in problems(fields, set(), {says.field: says})[-1]
