"""Change impact on catalog pairs: a small catalog planned and synthesized, then a changed
plan (a model moved by a re-plan, a model removed, a model added to a kept endpoint, an
endpoint's instance type changed) synthesized, and the report's lines checked."""

from __future__ import annotations

import copy
import sys
from dataclasses import replace

import aws_cdk as cdk
import pytest

from fm_platform.fleet.planner import Planner
from fm_platform.stacks.fleet import fleet_stacks
from tests.fleet_support import catalog
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from change_impact import change_impacts, report_lines  # noqa: E402

#: What `cdk synth` adds and an in-process App does not: the construct paths the report names.
CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True}
MODELS = [
    # g6e: the measured ml.g5.2xlarge copies would otherwise win and rename the endpoint
    {"name": "chat-8b", "architecture": "llama-3.1-8b", "peak_rpm": 180, "instance_family": "g6e"},
    {"name": "chat-70b", "architecture": "llama-3.1-70b", "peak_rpm": 60},
    {"name": "emb-a", "architecture": "bge-large-en-v1.5", "framework": "pytorch", "peak_rpm": 600},
]
ADDED = {
    "name": "chat-8b-b",
    "architecture": "llama-3.1-8b",
    "peak_rpm": 30,
    "instance_family": "g6e",
}


def _templates(plan, cat) -> dict[str, dict]:
    app = cdk.App(context=CLI_CONTEXT)
    fleet_stacks(app, plan, cat)
    return {s.stack_name: s.template for s in app.synth().stacks}


def _changed(plan, *, same_type_move: bool):
    """The base plan with emb-a removed, chat-8b-b added on chat-8b's endpoint, chat-8b
    moved to a new endpoint (of chat-8b's type when ``same_type_move``, else another) and
    chat-70b's endpoint given another instance type."""
    head = copy.deepcopy(plan)
    del head.placements["emb-a"], head.endpoints["sme-emb-a"]
    kept = head.endpoints["ic-g6e-001"]
    head.placements["chat-8b-b"] = replace(head.placements["chat-8b"], name="chat-8b-b")
    kept.models = ["chat-8b-b"]
    target_type = kept.instance_type if same_type_move else "ml.g6e.2xlarge"
    head.endpoints["ic-g6e-002"] = replace(
        kept, name="ic-g6e-002", instance_type=target_type, models=["chat-8b"]
    )
    head.placements["chat-8b"] = replace(head.placements["chat-8b"], endpoint="ic-g6e-002")
    head.endpoints["ic-p4d-001"].instance_type = "ml.p4de.24xlarge"
    return head


@pytest.fixture(scope="module")
def pair():
    base_catalog = catalog(MODELS, name="pair")
    base = Planner(base_catalog).run()
    head_catalog = catalog([*MODELS[:2], ADDED], name="pair")
    return base, _templates(base, base_catalog), head_catalog


@pytest.mark.slow
@pytest.mark.parametrize("same_type_move", [True, False], ids=["same-key", "other-type"])
def test_a_changed_catalog_reports_moves_removals_additions_and_retyped_endpoints(
    pair, same_type_move
):
    base, before, head_catalog = pair
    assert [e.name for e in base.endpoints.values()] == ["ic-g6e-001", "ic-p4d-001", "sme-emb-a"]
    after = _templates(_changed(base, same_type_move=same_type_move), head_catalog)
    impacts = change_impacts(before, after)
    printed = [
        line
        for impact in report_lines(impacts)
        for line in impact.split("\n")
        if not line.startswith("      source:")
    ]
    moved_to = "pair-01/IcEndpoint-ic-g6e-002/Model-chat-8b/Component"
    if same_type_move:
        # Same instance type and variant: the same key, so the same component name.
        move = [
            "  REFUSED pair-01: pair-01/IcEndpoint-ic-g6e-001/Model-chat-8b/Component424d77b4: "
            f"model moves to pair-01: {moved_to}424d77b4 under the same component name "
            "pair-01-chat-8b-424d77b4: the new component cannot be created while the old one "
            "exists",
            "      what to do: deploy twice: first with the model removed from its old endpoint "
            "(the component is deleted), then with it on the new one",
        ]
    else:
        move = []
    assert printed == [
        *move,
        "  pair-01: pair-01/IcEndpoint-ic-p4d-001/Endpoint/Endpoint540daf22: endpoint replaced "
        "by pair-01/IcEndpoint-ic-p4d-001/Endpoint/Endpoint415abb6e (instance type "
        "ml.p4d.24xlarge -> ml.p4de.24xlarge): its name changes for every caller once the old "
        "one is deleted; the new name is in the output EndpointIcP4d001",
        "  pair-01: pair-01/SingleModelEndpoint-sme-emb-a/Endpoint: endpoint removed: callers "
        "using its name get errors once it is deleted",
        *(
            []
            if same_type_move
            else [
                "  pair-01: pair-01/IcEndpoint-ic-g6e-001/Model-chat-8b/Component424d77b4: model "
                f"moves to {moved_to}6eef137b: a new component is created under a new name and "
                "this one deleted once it is in service; callers that name the component change"
            ]
        ),
        "  pair-01: pair-01/IcEndpoint-ic-p4d-001/Model-chat-70b/Component540daf22: component "
        "replaced by pair-01/IcEndpoint-ic-p4d-001/Model-chat-70b/Component415abb6e: a new "
        "component is created under a new name and this one deleted once it is in service; "
        "callers that name the component change",
        "  pair-01: pair-01/Observability/Endpoint-sme-emb-a: alarm removed: nobody is told any "
        "more",
    ]
    # A model added to a kept endpoint (chat-8b-b on ic-g6e-001) changes nothing running.
    assert not [i for i in impacts if "chat-8b-b" in i.resource]
