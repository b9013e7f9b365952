"""Each container family runs what the plan sized: the synthesized templates' images,
environments, weights and isolation checked against the plan, and LoRA adapters on their
base's component."""

from __future__ import annotations

import json
import math
import re

import aws_cdk as cdk
import pytest
from cfnlint.api import ManualArgs, lint

from fm_platform.containers.images import image
from fm_platform.fleet.deciding.options import family_types
from fm_platform.fleet.models.adapters import planning_catalog
from fm_platform.fleet.models.catalog import catalog_from_data
from fm_platform.fleet.outputs.plan import read_plan
from fm_platform.fleet.outputs.serving import annotate
from fm_platform.fleet.placing.planner import Planner, plan_fleet
from fm_platform.fleet.sizing.needs import resolve
from fm_platform.stacks.fleet import fleet_stacks
from tests.support import nag_findings

SECRET = "arn:aws:secretsmanager:us-east-1:111122223333:secret:hf-token-AbCdEf"
KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
CUSTOM = "111122223333.dkr.ecr.us-east-1.amazonaws.com/team/classifier:1.4"
MODELS = [
    {
        "name": "chat-8b",
        "architecture": "llama-3.1-8b",
        "hub": "meta-llama/Llama-3.1-8B-Instruct",
        "revision": "0e9e39f249a16976918f6564b8830bc894c89659",
        "hub_token_secret": SECRET,
        "peak_rpm": 120,
    },
    {"name": "support-a", "base_model": "chat-8b", "adapter": "s3://team-adapters/a.tar.gz"},
    {
        "name": "support-b",
        "base_model": "chat-8b",
        "adapter": "s3://team-adapters/b.tar.gz",
        "adapter_rank": 32,
    },
    {
        "name": "tgi-7b",
        "architecture": "mistral-7b-v0.3",
        "container": "tgi",
        "weights_uri": "s3://team-models/mistral-7b/",
        "weights_kms_key_arn": KEY,
        "dtype": "fp8",
        "peak_rpm": 60,
    },
    {"name": "embedder", "architecture": "bge-large-en-v1.5", "peak_rpm": 600},
    {"name": "reranker", "params_b": 0.56, "task": "reranking", "peak_rpm": 300},
    {
        "name": "intent",
        "architecture": "deberta-v3-base",
        "instance_family": "c6i",
        "peak_rpm": 120,
    },
    {
        "name": "sdxl",
        "params_b": 3.5,
        "task": "image-generation",
        "dtype": "fp16",
        "memory_gib": 12,
        "rpm_per_copy": 6,
        "peak_rpm": 12,
    },
    {"name": "whisper", "params_b": 1.55, "task": "speech-to-text", "rpm_per_copy": 30},
    {"name": "custom", "params_b": 0.3, "task": "classification", "image": CUSTOM},
]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    catalog = catalog_from_data(
        {"name": "teams", "models": MODELS}, family_types("us-east-1"), region="us-east-1"
    )
    path = tmp_path_factory.mktemp("plan") / "teams.plan.json"
    annotate(plan_fleet(planning_catalog(catalog), region="us-east-1"), catalog).write(path)
    plan = read_plan(path)  # the settings are checked against the plan file
    assert plan is not None
    app = cdk.App()
    fleet_stacks(app, plan, catalog)
    findings = nag_findings(app)
    assembly = app.synth()
    return catalog, plan, assembly, findings


def _models(assembly):
    """Each model's (container, model resource, its template) by component/model name."""
    found = {}
    for stack in assembly.stacks:
        resources = stack.template["Resources"]
        for logical, resource in resources.items():
            if resource["Type"] == "AWS::SageMaker::Model":
                found[logical] = (resource["Properties"], stack.template)
    return found


def _container_of(assembly, model):
    matches = [
        props
        for logical, (props, _) in _models(assembly).items()
        if f"{model}".replace("-", "") in logical.replace("-", "")
    ]
    assert len(matches) == 1, (model, list(_models(assembly)))
    return matches[0]


def _model_of(component_name: str) -> str:
    """A component name without its endpoint's replacement key (8 hex digits)."""
    return re.sub(r"-[0-9a-f]{8}$", "", component_name)


def _components(assembly):
    return {
        r["Properties"]["InferenceComponentName"]: r["Properties"]
        for stack in assembly.stacks
        for r in stack.template["Resources"].values()
        if r["Type"] == "AWS::SageMaker::InferenceComponent"
    }


@pytest.mark.slow  # cfn-lint
def test_the_fleet_is_clean_for_cfn_lint_and_cdk_nag(fleet):
    _, _, assembly, findings = fleet
    assert findings == []
    for stack in assembly.stacks:
        matches = lint(json.dumps(stack.template), config=ManualArgs(regions=["us-east-1"]))
        assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_lmi_runs_the_planned_parallelism_concurrency_context_and_dtype(fleet):
    catalog, plan, assembly, _ = fleet
    props = _container_of(assembly, "chat-8b")
    env = props["PrimaryContainer"]["Environment"]
    p = plan.placements["chat-8b"]
    needs = resolve(next(m for m in catalog.models if m.name == "chat-8b"), catalog)
    assert env["OPTION_TENSOR_PARALLEL_DEGREE"] == str(p.accelerators)
    assert env["OPTION_MAX_ROLLING_BATCH_SIZE"] == str(p.concurrency)
    # the requests the copy finishes within the real-time limit queue; more are rejected
    assert int(env["SERVING_JOB_QUEUE_SIZE"]) == max(p.concurrency, math.ceil(p.rpm_per_copy))
    assert env["OPTION_PREDICT_TIMEOUT"] == "60"
    assert env["OPTION_MAX_MODEL_LEN"] == str(needs.context_tokens)
    assert env["OPTION_DTYPE"] == "bf16" and "OPTION_QUANTIZE" not in env
    assert env["HF_MODEL_ID"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert env["OPTION_REVISION"] == "0e9e39f249a16976918f6564b8830bc894c89659"
    assert env["HF_TOKEN"] == "{{resolve:secretsmanager:" + SECRET + ":SecretString}}"
    assert env["OPTION_ENABLE_LORA"] == "true" and env["OPTION_MAX_LORAS"] == "2"
    assert env["OPTION_MAX_LORA_RANK"] == "32"  # support-b's rank, the largest
    assert plan.placements["chat-8b"].memory_parts["adapters_gib"] == round(needs.adapters_gib, 2)
    lmi = image("lmi", "gpu")
    assert props["PrimaryContainer"]["Image"] == lmi.uri("us-east-1")  # type: ignore[union-attr]
    # a hub model downloads its weights: no artifacts, network isolation off for it only
    assert "ModelDataSource" not in props["PrimaryContainer"]
    assert "ModelDataUrl" not in props["PrimaryContainer"]
    assert "EnableNetworkIsolation" not in props
    others = [
        m for name, (m, _) in _models(assembly).items() if "chat8b" not in name.replace("-", "")
    ]
    assert all(m.get("EnableNetworkIsolation") for m in others)


def test_adapters_are_components_on_their_base_sized_for_the_combined_traffic(fleet):
    catalog, plan, assembly, _ = fleet
    components = _components(assembly)
    base = next(n for n in components if _model_of(n).endswith("chat-8b"))
    for adapter, url in (
        ("support-a", "s3://team-adapters/a.tar.gz"),
        ("support-b", "s3://team-adapters/b.tar.gz"),
    ):
        name = next(n for n in components if _model_of(n).endswith(adapter))
        spec = components[name]["Specification"]
        assert spec == {"BaseInferenceComponentName": base, "Container": {"ArtifactUrl": url}}
        assert "RuntimeConfig" not in components[name]
    outputs = {k: v for s in assembly.stacks for k, v in s.template.get("Outputs", {}).items()}
    adapters = [n for n in components if _model_of(n).endswith(("support-a", "support-b"))]
    assert outputs["AdaptersChat8b"]["Value"] == ",".join(adapters)
    assert "support-a" not in plan.placements
    assert plan.placements["chat-8b"].adapters == ["support-a", "support-b"]
    assert plan.placements["chat-8b"].weights_from.endswith("network isolation off")
    assert plan.placements["chat-8b"].peak_rpm == 120 + 60 + 60


def test_the_stack_budget_covers_the_adapter_components_the_stacks_create(fleet):
    catalog, plan, assembly, _ = fleet
    planner = Planner(planning_catalog(catalog), region="us-east-1")
    planner.run()
    base_stack = plan.endpoints[plan.placements["chat-8b"].endpoint].stack
    for stack in assembly.stacks:
        if stack.stack_name not in plan.stacks:
            continue
        resources, outputs = planner.usage[stack.stack_name]
        assert len(stack.template["Resources"]) <= resources, stack.stack_name
        assert len(stack.template.get("Outputs", {})) <= outputs, stack.stack_name
        if stack.stack_name == base_stack:
            adapters = [
                r
                for r in stack.template["Resources"].values()
                if r["Type"] == "AWS::SageMaker::InferenceComponent"
                and "BaseInferenceComponentName" in r["Properties"]["Specification"]
            ]
            assert len(adapters) == 2


def test_tgi_shards_batches_and_quantizes_as_planned_reading_weights_from_s3(fleet):
    catalog, plan, assembly, _ = fleet
    props = _container_of(assembly, "tgi-7b")
    container = props["PrimaryContainer"]
    env = container["Environment"]
    p = plan.placements["tgi-7b"]
    needs = resolve(next(m for m in catalog.models if m.name == "tgi-7b"), catalog)
    assert env["NUM_SHARD"] == env["SM_NUM_GPUS"] == str(p.accelerators)
    # the planned sequences run; the requests a copy finishes in 60 s wait, more get 429
    assert env["MAX_BATCH_SIZE"] == str(p.concurrency)
    assert int(env["MAX_CONCURRENT_REQUESTS"]) == math.ceil(p.rpm_per_copy) > p.concurrency
    assert env["MAX_TOTAL_TOKENS"] == str(needs.context_tokens)
    assert int(env["MAX_INPUT_TOKENS"]) == needs.context_tokens - needs.output_tokens
    assert env["QUANTIZE"] == "fp8" and "DTYPE" not in env
    assert env["HF_MODEL_ID"] == "/opt/ml/model"
    assert container["ModelDataSource"]["S3DataSource"]["S3Uri"] == "s3://team-models/mistral-7b/"
    assert container["Image"].split("/")[1].startswith("huggingface-pytorch-tgi-inference:")


def test_the_weights_key_and_bucket_are_granted_to_the_role_reading_them(fleet):
    _, _, assembly, _ = fleet
    text = json.dumps([s.template for s in assembly.stacks])
    assert f'{{"Action": "kms:Decrypt", "Effect": "Allow", "Resource": "{KEY}"}}' in text
    assert ':s3:::team-models/mistral-7b/*"' in text
    assert ':s3:::team-adapters/a.tar.gz"' in text and ':s3:::team-adapters/b.tar.gz"' in text


def test_tei_serves_embeddings_and_rerankers_with_the_planned_batches(fleet):
    catalog, plan, assembly, _ = fleet
    for name in ("embedder", "reranker"):
        env = _container_of(assembly, name)["PrimaryContainer"]["Environment"]
        p = plan.placements[name]
        needs = resolve(next(m for m in catalog.models if m.name == name), catalog)
        # one input per request (the default): a permit per request the copy finishes
        # within the real-time limit; TEI's own client batch size; one whole context
        assert int(env["MAX_CONCURRENT_REQUESTS"]) == math.ceil(p.rpm_per_copy) > p.concurrency
        assert env["MAX_CLIENT_BATCH_SIZE"] == "32"
        assert env["MAX_BATCH_TOKENS"] == str(needs.context_tokens)
        image_uri = _container_of(assembly, name)["PrimaryContainer"]["Image"]
        assert "/tei" in image_uri and not image_uri.startswith("763104351884")


def test_toolkit_families_run_one_worker_with_their_pipeline(fleet):
    _, plan, assembly, _ = fleet
    intent = _container_of(assembly, "intent")["PrimaryContainer"]
    assert plan.endpoints[plan.placements["intent"].endpoint].instance_type.startswith("ml.c6i")
    assert intent["Environment"] == {
        "HF_TASK": "text-classification",
        "SAGEMAKER_MODEL_SERVER_WORKERS": "1",
        "SAGEMAKER_MODEL_SERVER_TIMEOUT": "60",
    }
    assert "-cpu-" in intent["Image"]
    whisper = _container_of(assembly, "whisper")["PrimaryContainer"]
    assert whisper["Environment"]["HF_TASK"] == "automatic-speech-recognition"
    sdxl = _container_of(assembly, "sdxl")["PrimaryContainer"]
    assert "stabilityai-pytorch-inference" in sdxl["Image"]
    assert sdxl["Environment"] == {
        "SAGEMAKER_MODEL_SERVER_WORKERS": "1",
        "SAGEMAKER_MODEL_SERVER_TIMEOUT": "60",
    }
    assert plan.endpoints[plan.placements["sdxl"].endpoint].instance_type.startswith(
        ("ml.g", "ml.p")
    )


def test_an_explicit_image_runs_as_given_with_nothing_planned_into_it(fleet):
    _, _, assembly, _ = fleet
    container = _container_of(assembly, "custom")["PrimaryContainer"]
    assert container["Image"] == CUSTOM
    assert "Environment" not in container


def test_an_adapter_whose_base_is_planned_off_inference_components_is_refused():
    models = [
        {"name": "base", "architecture": "llama-3.1-8b", "latency_class": "strict"},
        {"name": "ft", "base_model": "base", "adapter": "s3://team-adapters/ft.tar.gz"},
    ]
    catalog = catalog_from_data({"name": "t", "models": models}, family_types("us-east-1"))
    plan = plan_fleet(planning_catalog(catalog), region="us-east-1")
    endpoint = plan.endpoints[plan.placements["base"].endpoint]
    endpoint.kind, endpoint.scaling_target = "single-model", 10.0
    with pytest.raises(ValueError) as error:
        fleet_stacks(cdk.App(), plan, catalog)
    assert (
        "ft.base_model='base': is planned on a single-model endpoint; adapters are served "
        in str(error.value)
    )
