"""examples/platform-team.yaml, a catalog as a platform team writes it, planned from its plan
file and synthesized once: what deploys must serve what the plan sized.

One test per point, named ``test_point_<n>_...``, each reading the synthesized templates
(and the plan); add a point as one more test on the ``fleet`` fixture.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from cfnlint.api import ManualArgs, lint

from fm_platform.containers.environment import MODEL_DIRECTORY
from fm_platform.containers.images import hardware_kind, image
from fm_platform.fleet.deciding.kinds import (
    ASYNC,
    ASYNC_REQUEST_S,
    IC,
    MULTI,
    REALTIME_REQUEST_S,
    SINGLE,
)
from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.catalog import Catalog, catalog_from_data
from fm_platform.fleet.outputs.plan import Plan, default_plan_file, read_plan
from fm_platform.fleet.outputs.serving import serving_line
from fm_platform.fleet.planning import plan_catalog
from fm_platform.hardware.instances import instance_spec
from fm_platform.stacks.fleet import fleet_stacks
from fm_platform.stacks.inference import InferenceStack
from tests.support import ROOT, nag_findings, new_app

CATALOG = ROOT / "examples" / "platform-team.yaml"
REGION = "us-east-1"


@dataclass(frozen=True)
class Fleet:
    catalog: Catalog
    plan: Plan
    stacks: dict[str, InferenceStack]
    templates: dict[str, dict[str, Any]]
    findings: list[str]


@dataclass(frozen=True)
class Served:
    """What the template runs for one planned model: its ``AWS::SageMaker::Model``
    properties and its endpoint config's."""

    model: dict[str, Any]
    config: dict[str, Any]


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    planned = plan_catalog(CATALOG, REGION, read_plan(default_plan_file(CATALOG)))
    catalog, plan = planned.served, planned.plan
    app = new_app()
    stacks = fleet_stacks(app, plan, catalog)
    findings = nag_findings(app)
    assembly = app.synth()
    templates = {s.stack_name: s.template for s in assembly.stacks}
    return Fleet(catalog, plan, stacks, templates, findings)


def _resource(fleet: Fleet, stack: str, construct: Any) -> dict[str, Any]:
    """The properties of ``construct`` (an L1 resource) in ``stack``'s template."""
    logical = fleet.stacks[stack].get_logical_id(construct)
    return fleet.templates[stack]["Resources"][logical]["Properties"]


def _served(fleet: Fleet) -> dict[str, Served]:
    """Per planned model, the model and endpoint config the templates hold for it."""
    found = {}
    for endpoint in fleet.plan.endpoints.values():
        stack = fleet.stacks[endpoint.stack]
        for name in endpoint.models:
            if endpoint.kind == IC:
                construct = stack.ic_models[name]
                model, config = construct.model, construct.endpoint.endpoint_config
            else:
                owner = {
                    SINGLE: stack.single_model_endpoints,
                    MULTI: stack.multi_model_endpoints,
                    ASYNC: stack.async_endpoints,
                }[endpoint.kind][endpoint.name]
                model, config = owner.model, owner.endpoint_config
            found[name] = Served(
                _resource(fleet, endpoint.stack, model), _resource(fleet, endpoint.stack, config)
            )
    return found


def test_the_catalog_plans_as_its_plan_file_places_it_and_synthesizes_nag_clean(fleet):
    kept = read_plan(default_plan_file(CATALOG))
    assert kept is not None
    assert {n: p.endpoint for n, p in fleet.plan.placements.items()} == {
        n: p.endpoint for n, p in kept.placements.items()
    }
    kinds = {e.kind for e in fleet.plan.endpoints.values()}
    assert kinds == {IC, SINGLE, MULTI, ASYNC}
    assert fleet.findings == []


@pytest.mark.slow  # cfn-lint
def test_the_catalog_synthesizes_cfn_lint_clean(fleet):
    for template in fleet.templates.values():
        matches = lint(json.dumps(template), config=ManualArgs(regions=[REGION]))
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_point_1_a_hub_model_never_runs_on_a_network_isolated_endpoint(fleet):
    # botocore CreateEndpointConfigInput.EnableNetworkIsolation: "all model containers
    # deployed to the endpoint are isolated"; a hub model downloads its weights.
    entries = {m.name: m for m in fleet.catalog.models}
    served = _served(fleet)
    hub = {n for n in served if entries[n].hub is not None}
    assert hub == {"assistant-8b"}
    for name, s in served.items():
        env = s.model["PrimaryContainer"].get("Environment", {})
        endpoint = fleet.plan.endpoints[fleet.plan.placements[name].endpoint]
        if name in hub:
            assert env["HF_MODEL_ID"] == entries[name].hub
            assert "EnableNetworkIsolation" not in s.config
            assert "EnableNetworkIsolation" not in s.model
            assert not endpoint.network_isolation
            assert endpoint.models == [name]  # no model with S3 weights beside it
        else:
            assert env.get("HF_MODEL_ID", MODEL_DIRECTORY) == MODEL_DIRECTORY
            assert s.model["EnableNetworkIsolation"] is True
            assert endpoint.network_isolation
            if endpoint.kind == IC:
                assert s.config["EnableNetworkIsolation"] is True
    # the plan file and --explain say where the weights come from and the endpoint's state
    assistant = fleet.plan.placements["assistant-8b"]
    first_line = serving_line(fleet.plan, "assistant-8b").splitlines()[0]
    endpoint_state = f"endpoint {assistant.endpoint} not network-isolated"
    assert first_line.endswith(f"weights from {assistant.weights_from}; {endpoint_state}")
    assert assistant.weights_from.startswith("hub meta-llama/Llama-3.1-8B-Instruct@")
    regulated = fleet.plan.placements["claims-summarizer-regulated"]
    assert (
        serving_line(fleet.plan, regulated.name)
        .splitlines()[0]
        .endswith(
            f"weights from {entries[regulated.name].weights_uri}; endpoint {regulated.endpoint} "
            "network-isolated"
        )
    )
    record = json.loads(fleet.plan.to_json())["endpoints"]
    assert {e["name"]: e["network_isolation"] for e in record}[assistant.endpoint] is False


def test_point_2_every_adapter_is_one_tar_gz_archive(fleet):
    # botocore InferenceComponentContainerSpecification.ArtifactUrl: "a single gzip
    # compressed tar archive (.tar.gz suffix)"
    adapters = {m.name: m for m in fleet.catalog.models if m.base_model is not None}
    assert {m.tenant for m in adapters.values()} == {"acme", "globex", "initech"}
    urls = sorted(
        r["Properties"]["Specification"]["Container"]["ArtifactUrl"]
        for template in fleet.templates.values()
        for r in template["Resources"].values()
        if r["Type"] == "AWS::SageMaker::InferenceComponent"
        and "BaseInferenceComponentName" in r["Properties"]["Specification"]
    )
    assert urls == sorted(str(m.adapter) for m in adapters.values())
    assert all(url.endswith(".tar.gz") for url in urls)


def test_point_4_the_plan_names_the_container_each_template_runs(fleet):
    served = _served(fleet)
    assert any(e.kind == MULTI for e in fleet.plan.endpoints.values())
    for name, s in served.items():
        p = fleet.plan.placements[name]
        endpoint = fleet.plan.endpoints[p.endpoint]
        hardware = hardware_kind(instance_spec(endpoint.instance_type).accelerator)
        found = image(p.container, hardware)
        assert found is not None, (name, p.container, hardware)
        assert s.model["PrimaryContainer"]["Image"] == found.uri(REGION), name
    for endpoint in (e for e in fleet.plan.endpoints.values() if e.kind == MULTI):
        assert {fleet.plan.placements[n].container for n in endpoint.models} == {"pytorch"}
        container = served[endpoint.models[0]].model["PrimaryContainer"]
        assert container["Mode"] == "MultiModel"
        assert container["Environment"] == {
            "SAGEMAKER_MODEL_SERVER_WORKERS": "1",
            "SAGEMAKER_MODEL_SERVER_TIMEOUT": "60",
        }
    # the TEI embedder, small enough for a multi-model endpoint, is kept off it
    embedder = fleet.plan.placements["search-embedder"]
    assert embedder.container == "tei"
    assert fleet.plan.endpoints[embedder.endpoint].kind != MULTI


def test_point_5_a_container_is_checked_against_the_task_its_architecture_gives(fleet):
    served = _served(fleet)
    for name, family in (("marketing-sdxl", "stabilityai"), ("call-transcriber", "huggingface")):
        assert fleet.plan.placements[name].container == family
        assert (
            f"/{image(family, 'gpu').repository}:"
            in (  # type: ignore[union-attr]
                served[name].model["PrimaryContainer"]["Image"]
            )
        )
    data = yaml.safe_load(CATALOG.read_text())
    wrong = {"marketing-sdxl": "tei", "call-transcriber": "lmi"}
    for model in data["models"]:
        model["container"] = wrong.get(model["name"], model.get("container"))
        if model["container"] is None:
            del model["container"]
    with pytest.raises(ValueError) as error:
        catalog_from_data(data, family_types(REGION), region=REGION)
    index = {m["name"]: i for i, m in enumerate(data["models"])}
    assert str(error.value).splitlines()[1:] == [
        f"  - models[{index['marketing-sdxl']}].container='tei': serves embedding, reranking, "
        "classification, not task image-generation (architecture sdxl-base-1.0's task): name "
        "a container for it (huggingface, pytorch, stabilityai) or leave container unset",
        f"  - models[{index['call-transcriber']}].container='lmi': serves text-generation, not "
        "task speech-to-text (architecture whisper-large-v3's task): name a container for it "
        "(huggingface, pytorch) or leave container unset",
    ]


def test_point_3_embedders_and_rerankers_take_their_inputs_and_queue_their_peak(fleet):
    served = _served(fleet)
    for name, inputs in (("search-embedder", 16), ("search-reranker", 20)):
        p = fleet.plan.placements[name]
        env = served[name].model["PrimaryContainer"]["Environment"]
        assert p.container == "tei"
        # a request of the catalog's size is taken, never refused as too large ...
        assert int(env["MAX_CLIENT_BATCH_SIZE"]) >= inputs
        # ... and a copy holds a permit per input of every request it answers in 60 s,
        # more than its share of the peak minute: a burst queues instead of a 429
        permits = int(env["MAX_CONCURRENT_REQUESTS"])
        assert permits >= inputs * p.peak_rpm / max(1, p.max_copies) * REALTIME_REQUEST_S / 60
        assert permits > inputs * p.concurrency


def test_point_6_every_stack_is_bound_to_the_plans_region(fleet):
    assert fleet.plan.region == REGION
    assert {stack.region for stack in fleet.stacks.values()} == {REGION}
    for served in _served(fleet).values():
        assert f".ecr.{REGION}.amazonaws.com/" in served.model["PrimaryContainer"]["Image"]


def test_point_9_detailed_observability_is_off_unless_asked(fleet):
    configs = [
        served.config
        for name, served in _served(fleet).items()
        if fleet.plan.endpoints[fleet.plan.placements[name].endpoint].kind == IC
    ]
    assert configs
    for config in configs:
        assert config["MetricsConfig"]["EnableDetailedObservability"] is False


def test_point_12_the_batch_model_may_take_its_planned_seconds(fleet):
    p = fleet.plan.placements["nightly-report-writer"]
    assert fleet.plan.endpoints[p.endpoint].kind == ASYNC and p.latency_ms is not None
    env = _served(fleet)["nightly-report-writer"].model["PrimaryContainer"]["Environment"]
    assert int(env["OPTION_PREDICT_TIMEOUT"]) == ASYNC_REQUEST_S >= p.latency_ms / 1000
