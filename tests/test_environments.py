"""Environments (docs/environments.md): the example's three environments synthesized as
`cdk synth` builds them, one stage each bound to its account and region, each stack
snapshot-tested; the catalogs planned per region; every configuration problem reported
at once, named by key; the pipeline promoting them."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from cfnlint.api import ManualArgs, lint
from syrupy.extensions.json import JSONSnapshotExtension

from fm_platform.app import build_app
from fm_platform.config import CONFIG_FILE_CONTEXT_KEY
from fm_platform.config.environments import load_environments, merged
from fm_platform.fleet.outputs.plan import read_plan
from fm_platform.hardware.offerings import nearest_offered
from fm_platform.hardware.prices import hourly_prices
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks.environment import plan_environments
from fm_platform.stacks.fleet import planned_catalog_file
from tests.conftest import CLI_CONTEXT
from tests.support import ROOT, new_app, normalized, open_findings

sys.path.insert(0, str(ROOT / "scripts"))
from deploy_cost import environments_report  # noqa: E402
from diff_stacks import of_environment, stack_templates  # noqa: E402
from docs_assembly import Assembly  # noqa: E402
from leftovers import Leftovers, render  # noqa: E402

EXAMPLE = Path("examples") / "environments"
CONFIG = EXAMPLE / "platform.json"
PIPELINE_CONFIG = EXAMPLE / "pipeline.json"
ACCOUNTS = {"dev": "111111111111", "staging": "222222222222", "prod": "222222222222"}
REGIONS = {"dev": "us-east-1", "staging": "us-east-1", "prod": "eu-west-1"}
STACKS = (
    "dev/team-dev-artifacts",
    "dev/team-dev-01",
    "staging/FmpTrainingData",
    "staging/FmpTraining",
    "staging/team-artifacts",
    "staging/team-01",
    "prod/FmpTrainingData",
    "prod/FmpTraining",
    "prod/team-artifacts",
    "prod/team-01",
)


@contextmanager
def _in_copy(directory: Path) -> Iterator[Path]:
    """The example copied into ``directory`` (the plans the synth writes land there, not
    in the project), the working directory while inside."""
    shutil.copytree(ROOT / EXAMPLE, directory / EXAMPLE)
    previous = Path.cwd()
    os.chdir(directory)
    try:
        yield directory
    finally:
        os.chdir(previous)


def _synth(config: Path, outdir: Path) -> tuple[cdk.App, Any]:
    app = new_app(context={**CLI_CONTEXT, CONFIG_FILE_CONTEXT_KEY: str(config)}, outdir=str(outdir))
    stacks = build_app(app)
    return stacks, app.synth()


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example app synthesized from a copy of examples/environments: its stages, its
    assembly and the directory of the copy."""
    directory = tmp_path_factory.mktemp("environments")
    with _in_copy(directory):
        stacks, assembly = _synth(CONFIG, directory / "cdk.out")
    return stacks, assembly, directory


@pytest.fixture(scope="module")
def templates(example):
    _, assembly, _ = example
    return {s.hierarchical_id: s.template for s in assembly.stacks_recursively}


@pytest.fixture
def json_snapshot(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


def test_each_environment_is_a_stage_bound_to_its_account_and_region(example):
    stacks, assembly, _ = example
    assert list(stacks.stages) == ["dev", "staging", "prod"]
    assert stacks.training is None and stacks.inference is None
    found = {
        s.hierarchical_id: (s.stack_name, s.environment.account, s.environment.region)
        for s in assembly.stacks_recursively
    }
    assert sorted(found) == sorted(STACKS)
    for path, (name, account, region) in found.items():
        environment, stack = path.split("/")
        assert name == f"{environment}-{stack}"
        assert (account, region) == (ACCOUNTS[environment], REGIONS[environment])


def _id(stack: str) -> str:
    return stack.replace("/", ".")


@pytest.mark.parametrize("stack", STACKS, ids=_id)
def test_environment_template_snapshot(templates, json_snapshot, stack):
    assert normalized(templates[stack]) == json_snapshot


def test_the_environments_synthesize_without_lookups(example):
    """Stacks bound to an account and region look nothing up (AZs included): synth needs
    no credentials."""
    _, assembly, _ = example
    manifest = json.loads((Path(assembly.directory) / "manifest.json").read_text())
    assert manifest.get("missing") is None


def test_the_environments_pass_the_compliance_packs(example):
    _, assembly, _ = example
    assert open_findings(Path(assembly.directory)) == []
    report = json.loads((Path(assembly.directory) / "validation-report.json").read_text())
    checked = {
        c["constructPath"].split("/")[0]
        for plugin in report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
        for c in v["violatingConstructs"]
    }
    assert checked == {"dev", "staging", "prod"}


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS, ids=_id)
def test_cfn_lint_finds_nothing_in_the_environments(templates, stack):
    region = REGIONS[stack.split("/")[0]]
    matches = lint(json.dumps(templates[stack]), config=ManualArgs(regions=[region]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def _instance_groups(template: dict[str, Any]) -> dict[str, int]:
    cluster = next(
        r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"
    )
    groups = cluster["Properties"]["InstanceGroups"]
    return {g["InstanceGroupName"]: g["InstanceCount"] for g in groups}


def test_each_environment_gets_its_overrides_over_the_shared_values(templates):
    assert not any(s.startswith("dev/Fmp") for s in templates)  # training off in dev
    assert _instance_groups(templates["staging/FmpTraining"]) == {"controller": 1, "workers": 1}
    assert _instance_groups(templates["prod/FmpTraining"]) == {"controller": 1, "workers": 2}
    subnets = [
        r["Properties"]
        for r in templates["prod/FmpTrainingData"]["Resources"].values()
        if r["Type"] == "AWS::EC2::Subnet"
    ]
    assert {s["AvailabilityZoneId"] for s in subnets} == {"euw1-az1"}


@pytest.mark.parametrize(
    ("stack", "emails"),
    [
        ("dev/team-dev-01", {"ml-dev@example.com"}),
        ("prod/team-01", {"ml-platform@example.com", "ml-oncall@example.com"}),
    ],
)
def test_alarm_recipients_are_the_environments(templates, stack, emails):
    subscriptions = {
        r["Properties"]["Endpoint"]
        for r in templates[stack]["Resources"].values()
        if r["Type"] == "AWS::SNS::Subscription"
    }
    assert subscriptions == emails


def test_every_resource_carries_its_environments_tags(templates):
    buckets = [
        r["Properties"]
        for r in templates["dev/team-dev-artifacts"]["Resources"].values()
        if r["Type"] == "AWS::S3::Bucket"
    ]
    assert buckets
    for bucket in buckets:
        tags = {t["Key"]: t["Value"] for t in bucket["Tags"]}
        assert tags["environment"] == "dev" and tags["cost-center"] == "ml-dev"


def _images(template: dict[str, Any]) -> set[str]:
    text = json.dumps(template)
    return {part.split("/")[0] for part in text.split('"') if ".dkr.ecr." in part and "/" in part}


def test_one_catalog_planned_for_two_regions_has_each_regions_prices_and_images(example, templates):
    _, _, directory = example
    staging = read_plan(directory / EXAMPLE / "catalog.staging.plan.json")
    prod = read_plan(directory / EXAMPLE / "catalog.prod.plan.json")
    assert (staging.region, prod.region) == ("us-east-1", "eu-west-1")
    # The same model on the same type costs each region's price.
    for plan, region in ((staging, "us-east-1"), (prod, "eu-west-1")):
        endpoint = plan.endpoints["sme-search-embedder"]
        assert endpoint.instance_type == "ml.g6.xlarge"
        assert plan.placements["search-embedder"].expected_hourly == pytest.approx(
            hourly_prices(region)["ml.g6.xlarge"], rel=0.01
        )
    # Types the region does not offer are not planned there.
    assert all(e.instance_type in hourly_prices("eu-west-1") for e in prod.endpoints.values())
    # Images from each region's registry and publishing account.
    assert _images(templates["staging/team-01"]) == {
        "683313688378.dkr.ecr.us-east-1.amazonaws.com",
        "763104351884.dkr.ecr.us-east-1.amazonaws.com",
    }
    assert _images(templates["prod/team-01"]) == {
        "141502667606.dkr.ecr.eu-west-1.amazonaws.com",
        "763104351884.dkr.ecr.eu-west-1.amazonaws.com",
    }


def test_the_committed_plans_are_what_the_synth_writes(example):
    _, _, directory = example
    for plan in sorted((ROOT / EXAMPLE).glob("*.plan.json")):
        assert (directory / EXAMPLE / plan.name).read_text() == plan.read_text(), plan.name


def test_the_diff_reads_every_stage_and_keeps_one_environment(example):
    _, assembly, _ = example
    found = stack_templates(Path(assembly.directory))
    assert sorted(found) == sorted(STACKS)
    # Dependencies first: the data stack before its cluster, artifacts before endpoints.
    order = list(found)
    assert order.index("prod/FmpTrainingData") < order.index("prod/FmpTraining")
    assert order.index("prod/team-artifacts") < order.index("prod/team-01")
    assert list(of_environment(found, "prod")) == [s for s in order if s.startswith("prod/")]
    assert of_environment(found, None) == found


def test_destroy_lists_one_environments_leftovers_in_its_region(example):
    _, assembly, _ = example
    everything = Assembly.load(Path(assembly.directory))
    assert sorted(s.path for s in everything.stacks.values()) == sorted(STACKS)
    prod = everything.of_stage("prod")
    assert sorted(s.path for s in prod.stacks.values()) == [
        s for s in sorted(STACKS) if s.startswith("prod/")
    ]
    assert {s.region for s in prod.stacks.values()} == {"eu-west-1"}
    leftovers = Leftovers(prod)
    # Dependents first: the cluster before its data stack, a fleet stack before its artifacts.
    assert leftovers.stacks.index("prod-FmpTraining") < leftovers.stacks.index(
        "prod-FmpTrainingData"
    )
    assert leftovers.stacks.index("prod-team-01") < leftovers.stacks.index("prod-team-artifacts")
    listing = render(leftovers)
    assert (
        "prod-FmpTrainingData (region eu-west-1: run the commands with --region eu-west-1)"
        in listing
    )
    assert "dev-" not in listing


def test_deploy_prices_the_environment_in_its_region_with_its_fleet(example):
    _, _, directory = example
    with _in_copy(directory / "cost"):
        text = environments_report(json.loads(CONFIG.read_text()), "prod")
    assert text[0].startswith(
        "fm_platform: what environment prod's stacks cost once deployed in eu-west-1"
    )
    assert any("team-01" in line and "ml.g6.xlarge" in line for line in text)
    assert any("FmpTraining" in line and "2 x ml.p4d.24xlarge" in line for line in text)


# -- the configuration's checks ----------------------------------------------------------


def _config(*environments: dict[str, Any], **shared: Any) -> dict[str, Any]:
    return {"deploy_inference": False, **shared, "environments": list(environments)}


def _env(name: str = "dev", **values: Any) -> dict[str, Any]:
    return {"name": name, "account": "111111111111", "region": "us-east-1", **values}


def _problems(data: dict[str, Any]) -> tuple[str, ...]:
    with pytest.raises(ValidationError) as raised:
        load_environments(data)
    return raised.value.problems


def test_overrides_merge_objects_and_replace_the_rest():
    shared = {"training": {"availability_zone_id": "use1-az4", "instance_groups": [1, 2]}}
    overrides = {"training": {"instance_groups": [3]}, "deploy_training": False}
    assert merged(shared, overrides) == {
        "training": {"availability_zone_id": "use1-az4", "instance_groups": [3]},
        "deploy_training": False,
    }


def test_an_environment_reads_its_keys_and_its_overrides():
    environments = load_environments(
        _config(
            _env("dev", deploy_training=False, tags={"team": "ml"}),
            _env("prod", region="eu-west-1", training={"availability_zone_id": "euw1-az1"}),
        )
    )
    dev, prod = environments.environments
    assert (dev.config.deploy_training, dev.tags) == (False, {"team": "ml"})
    assert prod.config.training.availability_zone_id == "euw1-az1"
    assert prod.config.deploy_training and environments.pipeline is None


def test_every_problem_of_every_environment_is_named_by_its_key_at_once():
    problems = _problems(
        _config(
            _env("1dev", account="1234", region="eu-wst-1", plan_file="x.plan.json"),
            _env("prod", region="eu-west-1"),
            _env("prod", tags={"aws:owner": "me"}),
        )
    )
    assert problems == (
        "environments[0].name='1dev': must start with a letter and hold only letters, digits "
        "and hyphens, at most 20 characters (it prefixes the environment's stack names)",
        "environments[0].account='1234': must be a 12-digit AWS account ID",
        "environments[0].region='eu-wst-1': not one of the 37 allowed values; did you mean "
        "eu-west-1?",
        "environments[0].plan_file='x.plan.json': needs a catalog to plan; add catalog",
        "environments[2].tags='aws:owner': a tag key has 1 to 128 characters and does not "
        "start with aws: (reserved for AWS)",
        "environments[].name='prod': must be unique; it appears more than once",
        "environments[1].training.availability_zone_id='use1-az4': is in us-east-1; "
        "environment 'prod' deploys to eu-west-1: give an AZ ID of eu-west-1 (euw1-az1, ...) "
        "in the environment's training",
    )


def test_a_shared_problem_is_named_once_by_the_shared_key():
    problems = _problems(_config(_env("dev"), _env("prod"), training={"storage_capacity_gib": 1}))
    assert len(problems) == 1 and problems[0].startswith("training.storage_capacity_gib=1:")


def test_a_type_the_region_does_not_offer_names_the_environment_and_the_nearest():
    endpoint = {
        "name": "chat",
        "instance_type": "ml.g6e.12xlarge",
        "models": [{"model_name": "m", "accelerators": 1, "min_memory_mib": 1024}],
    }
    problems = _problems(
        _config(
            _env("staging"),
            _env("prod", region="eu-west-1", deploy_training=False),
            deploy_inference=True,
            deploy_training=False,
            inference={"ic_endpoints": [endpoint]},
        )
    )
    nearest = nearest_offered("ml.g6e.12xlarge", "eu-west-1")
    assert nearest == "ml.g5.24xlarge"
    assert problems == (
        "environments[1].inference.ic_endpoints[0].instance_type='ml.g6e.12xlarge': is not "
        "offered for SageMaker hosting in eu-west-1 (environment 'prod'; shipped prices of "
        f"fm_platform/hardware); nearest offered there: {nearest}",
    )


def test_the_pipeline_is_checked_with_the_environments():
    data = _config(_env("dev"))
    data["pipeline"] = {
        "connection_arn": "arn:aws:codecommit:us-east-1:1:repo",
        "repository": "no-slash",
        "account": "333333333333",
        "region": "us-east-1",
        "approval_before": ["prd"],
    }
    problems = _problems(data)
    assert problems[0].startswith(
        "pipeline.connection_arn='arn:aws:codecommit:us-east-1:1:repo': must be an AWS "
        "CodeConnections connection ARN"
    )
    assert problems[1:] == (
        "pipeline.repository='no-slash': must be owner/name",
        "pipeline.approval_before[0]='prd': must be one of dev",
    )


def test_an_empty_environments_list_is_refused():
    assert _problems({"environments": []}) == (
        "environments=[]: must be a non-empty list of environment objects",
    )


def test_a_plan_file_of_another_region_is_refused(tmp_path):
    with _in_copy(tmp_path):
        plan_file = EXAMPLE / "catalog.staging.plan.json"
        with pytest.raises(ValueError, match="was made for us-east-1, not eu-west-1") as raised:
            planned_catalog_file(
                str(EXAMPLE / "catalog.yaml"), region="eu-west-1", plan_file=plan_file
            )
        assert "fmp plan examples/environments/catalog.yaml --region eu-west-1" in str(raised.value)


def test_a_refused_catalog_names_its_environment(tmp_path):
    with _in_copy(tmp_path):
        catalog = EXAMPLE / "g7e.yaml"
        catalog.write_text(
            "name: g7e\nmodels:\n- name: chat\n  architecture: llama-3.1-8b\n"
            "  peak_rpm: 60\n  instance_family: g7e\n"
        )
        environments = load_environments(
            _config(
                _env("us", deploy_training=False, catalog=str(catalog)),
                _env("eu", region="eu-west-1", deploy_training=False, catalog=str(catalog)),
            )
        )
        with pytest.raises(ValidationError) as raised:
            plan_environments(environments.environments)
    (problem,) = raised.value.problems
    assert problem.startswith(
        "environments[1].catalog='examples/environments/g7e.yaml': environment 'eu' "
        "(eu-west-1, plan file examples/environments/g7e.eu.plan.json):"
    )
    assert "instance_family='g7e'" in problem


# -- the pipeline ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pipeline")
    with _in_copy(directory):
        _, assembly = _synth(PIPELINE_CONFIG, directory / "cdk.out")
    return assembly


def test_the_pipeline_deploys_the_environments_in_order_after_a_review(pipeline):
    stack = pipeline.get_stack_by_name("FmpPipeline")
    assert (stack.environment.account, stack.environment.region) == ("333333333333", "us-east-1")
    (resource,) = [
        r
        for r in stack.template["Resources"].values()
        if r["Type"] == "AWS::CodePipeline::Pipeline"
    ]
    stages = resource["Properties"]["Stages"]
    assert [s["Name"] for s in stages] == [
        "Source", "Build", "UpdatePipeline", "Assets", "dev", "staging", "prod"
    ]  # fmt: skip
    prod = {a["Name"]: a for a in stages[-1]["Actions"]}
    review, approval = prod["Review-prod"], prod["Approve-prod"]
    assert review["RunOrder"] < approval["RunOrder"]
    assert all(
        a["RunOrder"] > approval["RunOrder"] for n, a in prod.items() if n.endswith(".Deploy")
    )
    assert not any(a["Name"].startswith("Approve") for s in stages[:-1] for a in s["Actions"])
    # The review runs `make diff` of production against the previous commit.
    projects = json.dumps(stack.template)
    assert "make diff ENV=prod BASE=HEAD~1 MARKDOWN=review/prod.md" in projects
    assert "make synth ARGS=" in projects
    assert "-c config=examples/environments/pipeline.json" in projects


def test_the_pipeline_synthesizes_without_lookups(pipeline):
    manifest = json.loads((Path(pipeline.directory) / "manifest.json").read_text())
    assert manifest.get("missing") is None


def test_the_pipelines_stages_keep_the_environments_stack_names(pipeline):
    names = {
        s.hierarchical_id: s.stack_name
        for s in pipeline.stacks_recursively
        if s.hierarchical_id.count("/") == 2
    }
    assert names == {f"FmpPipeline/{s}": s.replace("/", "-") for s in STACKS}


def test_the_pipeline_passes_the_compliance_packs(pipeline):
    assert open_findings(Path(pipeline.directory)) == []
    report = json.loads((Path(pipeline.directory) / "validation-report.json").read_text())
    reasons = [
        v["reason"]
        for plugin in report["pluginReports"]
        for v in plugin.get("suppressedViolations", [])
        if any(
            c["constructPath"].startswith("FmpPipeline/Pipeline") for c in v["violatingConstructs"]
        )
    ]
    assert reasons and all(len(r) >= 40 for r in reasons)


@pytest.mark.slow
def test_cfn_lint_finds_nothing_in_the_pipeline(pipeline):
    for stack in pipeline.stacks:
        matches = lint(
            json.dumps(stack.template), config=ManualArgs(regions=[stack.environment.region])
        )
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == [], stack.stack_name
