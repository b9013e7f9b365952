"""A small catalog's fleet stacks: cfn-lint, the three cdk-nag packs, snapshots, budgets,
and the plan file's numbers in the templates."""

from __future__ import annotations

import json
import subprocess
import sys

import aws_cdk as cdk
import pytest
from cfnlint.api import ManualArgs, lint
from syrupy.extensions.json import JSONSnapshotExtension

from fm_platform.fleet.deciding.kinds import ASYNC, KINDS
from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.catalog import catalog_from_data
from fm_platform.fleet.outputs.plan import read_plan
from fm_platform.fleet.placing.planner import Limits, Planner
from fm_platform.stacks.fleet import fleet_stacks
from tests.conftest import synth_env
from tests.support import ROOT, nag_findings, normalized

SMALL = {
    "name": "small",
    "models": [
        {"name": "chat-8b", "architecture": "llama-3.1-8b", "peak_rpm": 180},
        {"name": "chat-70b", "architecture": "llama-3.1-70b", "peak_rpm": 60},
        {
            "name": "ft-7b",
            "architecture": "mistral-7b-v0.3",
            "peak_rpm": 30,
            "active_hours": 2,
            "cold_start_tolerant": True,
        },
        {
            "name": "summarizer",
            "architecture": "llama-3.1-8b",
            "peak_rpm": 60,
            "isolation": "dedicated",
            "isolation_reason": "PII",
        },
        {
            "name": "emb-a",
            "architecture": "bge-large-en-v1.5",
            "framework": "pytorch",
            "peak_rpm": 600,
            "cold_start_tolerant": True,
        },
        {
            "name": "emb-b",
            "architecture": "deberta-v3-base",
            "framework": "pytorch",
            "peak_rpm": 600,
            "cold_start_tolerant": True,
        },
        # Batch work: asynchronous endpoints, one on a GPU type with local NVMe storage, one
        # on an EBS-backed CPU type (its request bodies too large for a real-time endpoint).
        {
            "name": "nightly-summaries",
            "architecture": "llama-3.1-8b",
            "latency_class": "batch",
            "peak_rpm": 120,
            "active_hours": 4,
        },
        {
            "name": "emb-backfill",
            "architecture": "bge-large-en-v1.5",
            "framework": "pytorch",
            "latency_class": "batch",
            "peak_rpm": 300,
            "active_hours": 3,
            "instance_family": "c6i",
            "payload_mb": 50,
        },
        # Sporadic and small: a serverless endpoint (memory size and concurrency planned).
        {
            "name": "tagger",
            "architecture": "bge-small-en-v1.5",
            "peak_rpm": 30,
            "active_hours": 2,
            "cold_start_tolerant": True,
        },
    ],
}


@pytest.fixture(scope="module")
def planned():
    catalog = catalog_from_data(SMALL, family_types("us-east-1"))
    # Two to four endpoints per stack, so the small catalog shards too.
    planner = Planner(catalog, limits=Limits(stack_outputs=10))
    return catalog, planner, planner.run()


@pytest.fixture(scope="module")
def assembly(planned):
    catalog, _, plan = planned
    app = cdk.App()
    fleet_stacks(app, plan, catalog)
    findings = nag_findings(app)
    return plan, app.synth(), findings


def test_small_catalog_shards_into_stacks_named_by_the_plan(assembly):
    plan, cloud, _ = assembly
    # Every plan stack, and the one bucket they all read the models from.
    assert [s.stack_name for s in cloud.stacks] == ["small-artifacts", *plan.stacks]
    assert len(plan.stacks) >= 2


def test_cdk_nag_packs_find_nothing(assembly):
    assert assembly[2] == []


@pytest.mark.slow
def test_cfn_lint_and_limits(assembly):
    for stack in assembly[1].stacks:
        template = json.dumps(stack.template)
        matches = lint(template, config=ManualArgs(regions=["us-east-1"]))
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []
        assert len(stack.template["Resources"]) <= 500
        assert len(stack.template.get("Outputs", {})) <= 200
        assert len(template) < 1_000_000


def test_snapshots(assembly, snapshot):
    templates = {s.stack_name: normalized(s.template) for s in assembly[1].stacks}
    assert templates == snapshot.use_extension(JSONSnapshotExtension)


@pytest.mark.slow
def test_catalog_mode_plans_reads_no_configuration_and_says_it_is_for_this_command(tmp_path):
    catalog = tmp_path / "cat.yaml"
    catalog.write_text(json.dumps(SMALL))
    broken = tmp_path / "broken.json"
    broken.write_text('{"training": {"storage_capacity_gib": 1}}')
    # As the CDK CLI runs the app: the context holds cdk.json's "config" (here a broken
    # file) and the catalog given with -c.
    context = {"config": str(broken), "catalog": str(catalog)}
    env = {
        **synth_env(),
        "CDK_CONTEXT_JSON": json.dumps(context),
        "CDK_OUTDIR": str(tmp_path / "out"),
    }
    result = subprocess.run(
        [sys.executable, "app.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert "fleet mode: stacks planned from catalog" in result.stderr
    assert "the configuration file is not read" in result.stderr
    assert "given for this command only" in result.stderr
    assert "invalid configuration" not in result.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    stacks = [n for n, a in manifest["artifacts"].items() if a["type"].endswith("stack")]
    assert sorted(stacks) == ["small-01", "small-artifacts"]
    # Bound to the plan's region (us-east-1: no plan file yet), the account left to deploy.
    environments = {manifest["artifacts"][name]["environment"] for name in stacks}
    assert environments == {"aws://unknown-account/us-east-1"}
    assert (tmp_path / "cat.plan.json").exists()


def test_scaling_targets_are_the_plans(assembly):
    plan, cloud, _ = assembly
    targets = sorted(
        round(r["Properties"]["TargetTrackingScalingPolicyConfiguration"]["TargetValue"], 2)
        for stack in cloud.stacks
        for r in stack.template["Resources"].values()
        if r["Type"] == "AWS::ApplicationAutoScaling::ScalingPolicy"
        and "TargetTrackingScalingPolicyConfiguration" in r["Properties"]
    )
    expected = []
    for e in plan.endpoints.values():
        if e.kind == "inference-components":
            expected += [
                round(plan.placements[m].rpm_per_copy, 2)
                for m in e.models
                if (plan.placements[m].min_copies, plan.placements[m].max_copies) != (1, 1)
            ]
        elif e.kind in ("multi-model", ASYNC) or e.max_instances > 1:
            expected.append(round(e.scaling_target, 2))
    assert targets == sorted(expected) and targets


def test_batch_models_get_asynchronous_endpoints_scaling_from_zero(assembly):
    plan, cloud, _ = assembly
    batch = [m["name"] for m in SMALL["models"] if m.get("latency_class") == "batch"]
    templates = {s.stack_name: s.template["Resources"] for s in cloud.stacks}
    for model in batch:
        placement = plan.placements[model]
        endpoint = plan.endpoints[placement.endpoint]
        assert endpoint.kind == ASYNC and endpoint.min_hourly == 0 and placement.reason
        # Logical IDs: the construct path without its hyphens.
        stem = "AsyncEndpoint" + endpoint.name.replace("-", "")
        resources = templates[endpoint.stack]

        def one(kind, part, resources=resources, stem=stem):
            (found,) = (
                r["Properties"]
                for logical_id, r in resources.items()
                if r["Type"] == kind and logical_id.startswith(stem + part)
            )
            return found

        config = one("AWS::SageMaker::EndpointConfig", "EndpointConfig")
        assert config["ProductionVariants"][0]["InstanceType"] == endpoint.instance_type
        client = config["AsyncInferenceConfig"]["ClientConfig"]
        assert client["MaxConcurrentInvocationsPerInstance"] == placement.concurrency
        target = one("AWS::ApplicationAutoScaling::ScalableTarget", "ScalingTarget")
        assert (target["MinCapacity"], target["MaxCapacity"]) == (0, endpoint.max_instances)
        backlog = one("AWS::ApplicationAutoScaling::ScalingPolicy", "ScalingBacklog")
        tracking = backlog["TargetTrackingScalingPolicyConfiguration"]
        assert tracking["TargetValue"] == endpoint.scaling_target == placement.concurrency


def test_stack_budget_estimates_cover_what_the_stacks_create(planned, assembly):
    # The planner fills stacks by its estimates: they must not fall short of the
    # resources and outputs the synthesized stacks hold.
    _, planner, plan = planned
    for stack in assembly[1].stacks:
        if stack.stack_name not in plan.stacks:
            continue
        resources, outputs = planner.usage[stack.stack_name]
        assert len(stack.template.get("Resources", {})) <= resources, stack.stack_name
        assert len(stack.template.get("Outputs", {})) <= outputs, stack.stack_name


def test_shared_endpoint_starts_with_instances_for_every_first_copy():
    # Three models that may scale to zero on one endpoint: the plan's minimum is no
    # instance, yet each component starts at one copy, so the endpoint starts with the
    # instances those copies need (no initialCopiesExceedInstances warning).
    sleepy = [
        {
            "name": f"sleepy-{n}",
            "architecture": "llama-3.1-8b",
            "peak_rpm": 600,
            "active_hours": 2,
            "cold_start_tolerant": True,
        }
        for n in range(3)
    ]
    catalog = catalog_from_data({"name": "sleepy", "models": sleepy}, family_types("us-east-1"))
    plan = Planner(catalog).run()
    (endpoint,) = plan.endpoints.values()
    assert endpoint.min_instances == 0
    app = cdk.App()
    fleet_stacks(app, plan, catalog)
    assembly = app.synth()
    warnings = [
        m
        for stack in assembly.stacks
        for m in stack.messages
        if "initialCopiesExceedInstances" in str(m.entry.data)
    ]
    assert warnings == []
    config = next(
        r
        for stack in assembly.stacks
        for r in stack.template["Resources"].values()
        if r["Type"] == "AWS::SageMaker::EndpointConfig"
    )
    assert (
        config["Properties"]["ProductionVariants"][0]["ManagedInstanceScaling"]["MinInstanceCount"]
        == 0
    )


def test_a_serverless_model_gets_the_memory_and_concurrency_of_the_plan_file(
    planned, assembly, tmp_path
):
    _, _, plan = planned
    path = tmp_path / "small.plan.json"
    plan.write(path)
    written = read_plan(path)
    assert written is not None
    placement = written.placements["tagger"]
    endpoint = written.endpoints[placement.endpoint]
    assert KINDS[endpoint.kind].serverless and placement.cost_per_request
    resources = {s.stack_name: s.template["Resources"] for s in assembly[1].stacks}[endpoint.stack]
    stem = "ServerlessEndpoint" + endpoint.name.replace("-", "")
    (config,) = (
        r["Properties"]
        for logical_id, r in resources.items()
        if r["Type"] == "AWS::SageMaker::EndpointConfig" and logical_id.startswith(stem)
    )
    (variant,) = config["ProductionVariants"]
    assert variant["ServerlessConfig"] == {
        "MemorySizeInMB": placement.memory_mib,
        "MaxConcurrency": endpoint.max_instances,
    }
    assert endpoint.instance_type == f"serverless-{placement.memory_mib}MB"
    assert "KmsKeyId" in config
