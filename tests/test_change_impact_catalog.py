"""Change impact on catalog pairs: a small catalog planned and synthesized, then a changed
plan (a model moved by a re-plan, a model removed, a model added to a kept endpoint, an
endpoint's instance type changed) synthesized, and the report's lines checked; and a real
re-plan that moves a model between endpoints of one instance type, deployed in one go."""

from __future__ import annotations

import copy
import sys
from dataclasses import replace

import aws_cdk as cdk
import pytest

from fm_platform.fleet.models.adapters import planning_catalog
from fm_platform.fleet.outputs.plan import plan_from_json, record_moves
from fm_platform.fleet.outputs.serving import annotate
from fm_platform.fleet.placing.planner import Planner
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
    # dedicated: a single-model endpoint of its own, which the changed plan removes
    {
        "name": "emb-a",
        "architecture": "bge-large-en-v1.5",
        "framework": "pytorch",
        "peak_rpm": 600,
        "isolation": "dedicated",
        "isolation_reason": "a tenant's own endpoint",
    },
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
    record_moves(plan, head)  # as a re-plan records them
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
    # Same instance type and variant: the same key; the plan's record of the move names
    # the new component after its endpoint, so it is created beside the running one.
    key = "424d77b4" if same_type_move else "6eef137b"
    assert printed == [
        "  pair-01: pair-01/IcEndpoint-ic-p4d-001/Endpoint/Endpoint540daf22: endpoint replaced "
        "by pair-01/IcEndpoint-ic-p4d-001/Endpoint/Endpoint415abb6e (instance type "
        "ml.p4d.24xlarge -> ml.p4de.24xlarge): its name changes for every caller once the old "
        "one is deleted; the new name is in the output EndpointIcP4d001; while it runs, the new "
        "instances run beside the old ones: 1 more ml.p4de.24xlarge; the account's quota "
        "'ml.p4de.24xlarge for endpoint usage' must have room for them beside the running "
        "ones, or the deploy fails and rolls back",
        "  pair-01: pair-01/SingleModelEndpoint-sme-emb-a/Endpoint: endpoint removed: callers "
        "using its name get errors once it is deleted",
        "  pair-01: pair-01/IcEndpoint-ic-g6e-001/Model-chat-8b/Component424d77b4: model moves "
        f"to pair-01/IcEndpoint-ic-g6e-002/Model-chat-8b/Component{key}: a new component "
        f"pair-01-chat-8b-{key}-ic-g6e-002 is created under a new name and this one deleted "
        "once it is in service; callers that name the component read the new name (in the "
        "output ComponentsIcG6e002); its copies start at 1 (its initial count) and autoscaling "
        "moves on from there",
        "  pair-01: pair-01/IcEndpoint-ic-p4d-001/Model-chat-70b/Component540daf22: component "
        "replaced by pair-01/IcEndpoint-ic-p4d-001/Model-chat-70b/Component415abb6e: a new "
        "component pair-01-chat-70b-415abb6e is created under a new name and this one deleted "
        "once it is in service; callers that name the component read the new name (in the "
        "output ComponentsIcP4d001); its copies start at 1 (its initial count) and autoscaling "
        "moves on from there",
        "  pair-01: pair-01/Observability/Endpoint-sme-emb-a: alarm removed: nobody is told any "
        "more",
    ]
    # A model added to a kept endpoint (chat-8b-b on ic-g6e-001) changes nothing running.
    assert not [i for i in impacts if "chat-8b-b" in i.resource]


@pytest.mark.slow
def test_a_replan_that_moves_a_model_to_an_endpoint_of_the_same_type_deploys_in_one_go(pair):
    # chat-8b joins a group: the re-plan moves it from ic-g6e-001 to a new ic-chat-001 of the
    # same instance type (the same replacement key); the plan file records where it was.
    base, before, _ = pair
    grouped = catalog([{**MODELS[0], "group": "chat"}, *MODELS[1:]], name="pair")
    moved = Planner(grouped, base).run()
    placement = moved.placements["chat-8b"]
    assert (placement.endpoint, placement.moved_from) == ("ic-chat-001", "ic-g6e-001")
    instance_type = base.endpoints["ic-g6e-001"].instance_type
    assert moved.endpoints["ic-chat-001"].instance_type == instance_type
    after = _templates(moved, grouped)
    impacts = change_impacts(before, after)
    assert not [i for i in impacts if i.refused]
    [move] = [i for i in impacts if "model moves to" in i.what]
    assert move.resource == "pair-01/IcEndpoint-ic-g6e-001/Model-chat-8b/Component424d77b4"
    assert move.what.startswith(
        "model moves to pair-01/IcEndpoint-ic-chat-001/Model-chat-8b/Component424d77b4: a new "
        "component pair-01-chat-8b-424d77b4-ic-chat-001 is created under a new name"
    )
    # The next re-plan keeps the model where it is, under the same name: nothing changes.
    again = Planner(grouped, plan_from_json(moved.to_json())).run()
    assert again.placements["chat-8b"].moved_from == "ic-g6e-001"
    assert change_impacts(after, _templates(again, grouped)) == []


@pytest.mark.slow
def test_a_moved_base_takes_its_adapters_along_under_new_names():
    models = [
        MODELS[0],
        {"name": "support-a", "base_model": "chat-8b", "adapter": "s3://team-adapters/a.tar.gz"},
    ]
    base_catalog = catalog(models, name="ad")
    base = annotate(Planner(planning_catalog(base_catalog)).run(), base_catalog)
    # the group's endpoint on the base's instance family: the same type, the same key
    grouped = catalog(
        [{**models[0], "group": "chat", "instance_family": "g6e"}, models[1]], name="ad"
    )
    moved = annotate(Planner(planning_catalog(grouped), base).run(), grouped)
    impacts = change_impacts(_templates(base, base_catalog), _templates(moved, grouped))
    assert not [i for i in impacts if i.refused]
    [adapter] = [i for i in impacts if i.resource.startswith("ad-01/Adapter-support-a/")]
    assert adapter.what.endswith(
        "a new component ad-01-support-a-424d77b4-ic-chat-001 is created under a new name and "
        "this one deleted once it is in service; callers that name the component read the new "
        "name (in the output AdaptersChat8b); it runs in its base's copies"
    )
