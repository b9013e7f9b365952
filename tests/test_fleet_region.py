"""A fleet's stacks are bound to the plan's region: their environment is the plan's region,
and an environment or a stage of another region is refused at synth."""

from __future__ import annotations

import aws_cdk as cdk
import pytest

from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.catalog import catalog_from_data
from fm_platform.fleet.placing.planner import plan_fleet
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks.fleet import fleet_stacks

REGION = "eu-west-1"


@pytest.fixture(scope="module")
def planned():
    models = [{"name": "chat-8b", "architecture": "llama-3.1-8b", "peak_rpm": 120}]
    catalog = catalog_from_data(
        {"name": "eu", "models": models}, family_types(REGION), region=REGION
    )
    return plan_fleet(catalog, region=REGION), catalog


def _all_stacks(app: cdk.App) -> list[cdk.Stack]:
    return [c for c in app.node.find_all() if isinstance(c, cdk.Stack)]


def test_every_fleet_stack_deploys_to_the_plans_region(planned):
    plan, catalog = planned
    app = cdk.App()
    stacks = fleet_stacks(app, plan, catalog)
    assert plan.region == REGION
    assert {s.region for s in _all_stacks(app)} == {REGION}
    assert [s.stack_name for s in _all_stacks(app)] == ["eu-artifacts", *plan.stacks]
    # The images are the region's, written out (no AWS::Region to resolve at deploy time).
    template = app.synth().get_stack_by_name(next(iter(stacks))).template
    images = [
        r["Properties"]["PrimaryContainer"]["Image"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SageMaker::Model"
    ]
    assert images and all(f".dkr.ecr.{REGION}.amazonaws.com/" in i for i in images)


def test_an_env_of_the_plans_region_keeps_its_account(planned):
    plan, catalog = planned
    app = cdk.App()
    env = cdk.Environment(account="111122223333", region=REGION)
    fleet_stacks(app, plan, catalog, env=env)
    assert {(s.account, s.region) for s in _all_stacks(app)} == {("111122223333", REGION)}


@pytest.mark.parametrize(
    "env", [cdk.Environment(account="111122223333"), {"account": "111122223333"}]
)
def test_an_env_with_an_account_only_gets_the_plans_region(planned, env):
    plan, catalog = planned
    app = cdk.App()
    fleet_stacks(app, plan, catalog, env=env)
    assert {(s.account, s.region) for s in _all_stacks(app)} == {("111122223333", REGION)}


def test_an_env_of_another_region_is_refused_naming_the_plans_region(planned):
    plan, catalog = planned
    with pytest.raises(ValidationError) as error:
        fleet_stacks(cdk.App(), plan, catalog, env=cdk.Environment(region="us-west-2"))
    assert str(error.value) == (
        "invalid fleet environment:\n"
        "  - env.region='us-west-2': the plan of catalog eu is for eu-west-1 (its images, "
        "prices and ECR grants are that region's): deploy its stacks to eu-west-1 (leave "
        "the region out or give it), or re-plan for this region with fmp plan --region "
        "REGION"
    )


def test_a_stage_of_another_region_is_refused(planned):
    plan, catalog = planned
    stage = cdk.Stage(cdk.App(), "Prod", env=cdk.Environment(region="us-east-1"))
    with pytest.raises(ValidationError) as error:
        fleet_stacks(stage, plan, catalog)
    assert "  - stage region='us-east-1': the plan of catalog eu is for eu-west-1" in str(
        error.value
    )


def test_a_stage_of_the_plans_region_takes_the_fleet(planned):
    plan, catalog = planned
    stage = cdk.Stage(cdk.App(), "Prod", env=cdk.Environment(account="111122223333", region=REGION))
    stacks = fleet_stacks(stage, plan, catalog)
    assert {(s.account, s.region) for s in stacks.values()} == {("111122223333", REGION)}
