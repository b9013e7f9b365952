"""Catalog keys for weights, containers and adapters: every mistake in one pass, by key;
the container image table and the planner's candidate filter."""

from __future__ import annotations

import dataclasses
import json

import pytest

from fm_platform.containers.environment import ServingSettings, serving_environment
from fm_platform.containers.images import (
    container_problem,
    default_family,
    families,
    image,
    source,
)
from fm_platform.fleet.deciding.options import assess
from fm_platform.fleet.models.catalog import catalog_from_data
from fm_platform.fleet.sizing.needs import resolve
from tests.support import ROOT

SECRET = "arn:aws:secretsmanager:us-east-1:111122223333:secret:hf-token-AbCdEf"
#: The refusal of an adapter that is no single .tar.gz archive in S3.
NOT_AN_ARCHIVE = (
    "must be the s3:// URI of one gzip-compressed tar archive ending in .tar.gz (SageMaker "
    "loads an adapter from a single archive, not a prefix): package the adapter's directory "
    "(adapter_config.json and its weights) as one archive with `tar -czf adapter.tar.gz -C "
    "<adapter dir> .`, upload it with `aws s3 cp adapter.tar.gz "
    "s3://<bucket>/<path>/adapter.tar.gz` and give that URI"
)


def _problems(models, region="us-east-1"):
    with pytest.raises(ValueError) as error:
        catalog_from_data({"models": models}, set(), region=region)
    return str(error.value).splitlines()[1:]


def test_every_serving_mistake_is_reported_in_one_pass_naming_its_key():
    problems = _problems(
        [
            {"name": "a", "params_b": 8, "container": "vllm-gpu", "weights_uri": "https://x/y"},
            {
                "name": "b",
                "params_b": 8,
                "hub": "meta-llama/Llama-3.1-8B",
                "revision": "main",
                "hub_token_secret": "arn:aws:kms:us-east-1:111122223333:key/abc",
            },
            {
                "name": "c",
                "params_b": 1,
                "image": "763104351884.dkr.ecr.eu-west-1.amazonaws.com/x:1",
            },
            {"name": "d", "base_model": "missing", "adapter": "s3://team-bucket/d.tar.gz"},
            {"name": "e", "base_model": "f", "adapter": "s3://team-bucket/e.tar.gz"},
            {"name": "f", "params_b": 8, "isolation": "dedicated", "isolation_reason": "PII"},
            {"name": "g", "params_b": 8, "adapter": "not-a-uri"},
            {
                "name": "h",
                "params_b": 1,
                "task": "image-generation",
                "container": "tei",
                "rpm_per_copy": 6,
            },
            {"name": "i", "params_b": 1, "environment": {"A": True}},
        ]
    )
    assert problems == [
        "  - models[0].weights_uri='https://x/y': must be an s3://bucket/key URI",
        "  - models[0].container='vllm-gpu': must be one of huggingface, lmi, pytorch, "
        "stabilityai, tei, tgi",
        "  - models[1].hub_token_secret='arn:aws:kms:us-east-1:111122223333:key/abc': must be a "
        "Secrets Manager secret ARN such as "
        "arn:aws:secretsmanager:us-east-1:111122223333:secret:hf-token (an ARN of kms)",
        "  - models[2].image='763104351884.dkr.ecr.eu-west-1.amazonaws.com/x:1': is in "
        "eu-west-1; the fleet deploys to us-east-1: use the image's copy in us-east-1",
        f"  - models[6].adapter='not-a-uri': {NOT_AN_ARCHIVE}",
        "  - models[6].adapter='not-a-uri': needs base_model (a LoRA adapter names both)",
        "  - models[7].container='tei': serves embedding, reranking, classification, not task "
        "image-generation: name a container for it (huggingface, pytorch, stabilityai) or "
        "leave container unset",
        "  - models[8].environment={'A': True}: must map names to strings",
        "  - models[3].base_model='missing': is no model of the catalog",
        "  - models[4].base_model='f': is dedicated (a single-model endpoint); adapters are "
        "served only on an Inference Components base",
    ]


def test_weights_and_an_environment_sagemaker_cannot_take_are_refused_by_key():
    problems = _problems(
        [
            {"name": "a", "params_b": 1, "weights_uri": "s3://team-models/a/model.zip"},
            {"name": "b", "params_b": 1, "weights_uri": "s3://team-models/b/model.tar.gz"},
            {"name": "c", "params_b": 1, "weights_uri": "s3://team-models/c/"},
            {
                "name": "d",
                "params_b": 1,
                "environment": {"LONG": "x" * 1025, "2X": "1", "OK": 1},
            },
        ]
    )
    assert problems == [
        "  - models[0].weights_uri='s3://team-models/a/model.zip': must name a model.tar.gz "
        "(ending in .tar.gz; botocore ModelDataUrl) or a prefix of uncompressed files ending "
        "in / (ModelDataSource S3Prefix): pack the files with tar czf model.tar.gz -C <dir> . "
        "or end the URL with /",
        "  - models[3].environment.LONG='value of 1025 bytes': at most 1024 bytes per name and "
        "per value (botocore ContainerDefinition.Environment): shorten it, or move it into a "
        "file of the model's artifacts",
        "  - models[3].environment.2X='2X': a variable name must match [a-zA-Z_][a-zA-Z0-9_]* "
        "(botocore EnvironmentKey): letters, digits and _, not starting with a digit",
    ]


def test_a_hub_id_without_revision_is_a_warning_and_keys_need_their_partners():
    catalog = catalog_from_data(
        {"models": [{"name": "a", "params_b": 8, "hub": "org/model"}]}, set()
    )
    assert catalog.warnings == (
        "models[0].hub='org/model': no revision; the container downloads whatever the hub "
        "holds when it starts (set revision to a commit to pin it)",
    )
    assert _problems(
        [{"name": "a", "params_b": 8, "revision": "abc", "hub_token_secret": SECRET}]
    ) == [
        "  - models[0].revision='abc': needs hub",
        f"  - models[0].hub_token_secret={SECRET!r}: needs hub",
    ]


def test_the_image_table_cites_its_source_and_hugging_face_accounts_differ():
    data = json.loads((ROOT / "fm_platform/containers/images.json").read_text())
    assert "aws/sagemaker-python-sdk" in data["source"] and data["retrieved"]
    assert "retrieved" in source()
    assert set(families()) == {"lmi", "tgi", "tei", "pytorch", "huggingface", "stabilityai"}
    lmi, tei = image("lmi", "gpu"), image("tei", "cpu")
    assert lmi is not None and tei is not None
    assert lmi.uri("us-east-1").startswith("763104351884.dkr.ecr.us-east-1.amazonaws.com/djl")
    assert not tei.accounts["us-east-1"].startswith("763104351884")
    assert image("lmi", "neuron").tag.split("-")[1] == "neuronx"  # type: ignore[union-attr]


def test_a_family_without_an_image_for_a_hardware_kind_rules_those_types_out():
    assert container_problem("tgi", "inferentia") == (
        "container tgi has no neuron image (it has gpu); name another container or an image"
    )
    assert container_problem("custom", "none") is None
    assert default_family("reranking") == "tei" and default_family("embedding", "pytorch") == (
        "pytorch"
    )
    catalog = catalog_from_data(
        {
            "models": [
                {"name": "sdxl", "params_b": 3.5, "task": "image-generation", "rpm_per_copy": 6}
            ]
        },
        set(),
    )
    needs = resolve(catalog.models[0], catalog)
    assert needs.container == "stabilityai"
    rejected = assess(needs, "us-east-1").rejected
    assert rejected["ml.c5.xlarge"].startswith("container stabilityai has no cpu image")


def test_neuron_lmi_and_gpus_without_bf16_get_their_own_settings():
    neuron = ServingSettings(
        family="lmi",
        hardware="neuron",
        task="text-generation",
        tensor_parallel=2,
        max_concurrency=4,
        max_model_len=4096,
        max_input_tokens=3840,
        half="fp16",
    )
    env = serving_environment(neuron, {"OPTION_MAX_ROLLING_BATCH_SIZE": 2})
    assert env == {
        "HF_MODEL_ID": "/opt/ml/model",
        "OPTION_ROLLING_BATCH": "auto",
        "OPTION_TENSOR_PARALLEL_DEGREE": "2",
        "OPTION_MAX_ROLLING_BATCH_SIZE": "2",  # the catalog's environment wins
        "OPTION_N_POSITIONS": "4096",
        "OPTION_DTYPE": "fp16",
        # no traffic given: the sequences it runs, and the real-time limit
        "SERVING_JOB_QUEUE_SIZE": "4",
        "OPTION_PREDICT_TIMEOUT": "60",
    }
    int4 = serving_environment(dataclasses.replace(neuron, family="tgi", dtype="int4"))
    assert "QUANTIZE" not in int4 and int4["DTYPE"] == "float16"
    assert serving_environment(dataclasses.replace(neuron, family="custom")) == {}


def test_each_engine_is_told_only_the_quantization_its_docs_name():
    gpu = ServingSettings(
        family="lmi",
        hardware="gpu",
        task="text-generation",
        tensor_parallel=1,
        max_concurrency=8,
        max_model_len=4096,
        max_input_tokens=3840,
    )

    def env(**changes):
        return serving_environment(dataclasses.replace(gpu, **changes))

    # vLLM quantizes fp8 and bitsandbytes at load; pre-quantized AWQ (int4) is read from
    # the model's config and runs fp16 activations
    assert env(dtype="fp8")["OPTION_QUANTIZE"] == "fp8"
    assert env(dtype="int8")["OPTION_QUANTIZE"] == "bitsandbytes"
    int4 = env(dtype="int4")
    assert "OPTION_QUANTIZE" not in int4 and int4["OPTION_DTYPE"] == "fp16"
    # transformers-neuronx quantizes int8 as static_int8
    assert env(dtype="int8", hardware="neuron")["OPTION_QUANTIZE"] == "static_int8"
    assert env(family="tgi", dtype="int8")["QUANTIZE"] == "bitsandbytes"
    assert env(family="tgi", dtype="fp8")["QUANTIZE"] == "fp8"
    assert "DTYPE" not in env(family="tgi", dtype="fp8")
    assert env(family="tgi")["DTYPE"] == "bfloat16"
    assert env(family="tei", dtype="fp32")["DTYPE"] == "float32"


def test_tgi_refuses_fp32_and_neuron_types_refuse_fp8_and_int4():
    assert _problems(
        [{"name": "a", "architecture": "llama-3.1-8b", "container": "tgi", "dtype": "fp32"}]
    ) == ["  - models[0].dtype='fp32': container tgi runs float16 or bfloat16: use fp16 or bf16"]
    for dtype in ("fp8", "int4"):
        catalog = catalog_from_data(
            {
                "models": [
                    {
                        "name": "n",
                        "architecture": "llama-3.1-8b",
                        "neuron_compiled": True,
                        "dtype": dtype,
                    }
                ]
            },
            set(),
        )
        rejected = assess(resolve(catalog.models[0], catalog), "us-east-1").rejected
        assert rejected["ml.inf2.xlarge"] == (
            f"LMI on Neuron (transformers-neuronx) quantizes int8 weights only, not {dtype}"
        )


def test_a_container_is_checked_against_the_task_an_architecture_gives():
    # SDXL and Whisper name their task through their architecture: the same refusal as
    # with task: given, in the same one-pass list as the catalog's other problems.
    problems = _problems(
        [
            {"name": "sdxl", "architecture": "sdxl-base-1.0", "container": "tei"},
            {"name": "whisper", "architecture": "whisper-large-v3", "container": "lmi"},
            {
                "name": "sdxl-task",
                "architecture": "sdxl-base-1.0",
                "task": "image-generation",
                "container": "tei",
            },
            {"name": "ok", "params_b": 1, "peak_rpm": -1},
        ]
    )
    assert problems == [
        "  - models[0].container='tei': serves embedding, reranking, classification, not task "
        "image-generation (architecture sdxl-base-1.0's task): name a container for it "
        "(huggingface, pytorch, stabilityai) or leave container unset",
        "  - models[1].container='lmi': serves text-generation, not task speech-to-text "
        "(architecture whisper-large-v3's task): name a container for it (huggingface, "
        "pytorch) or leave container unset",
        "  - models[2].container='tei': serves embedding, reranking, classification, not task "
        "image-generation: name a container for it (huggingface, pytorch, stabilityai) or "
        "leave container unset",
        "  - models[3].peak_rpm=-1: must be >= 0",
    ]


def test_an_adapter_prefix_is_refused_with_how_to_package_one_archive():
    problems = _problems(
        [
            {"name": "chat", "params_b": 8},
            {"name": "ft", "base_model": "chat", "adapter": "s3://team-adapters/ft/"},
            {"name": "ok", "base_model": "chat", "adapter": "s3://team-adapters/ok.tar.gz"},
        ]
    )
    assert problems == [f"  - models[1].adapter='s3://team-adapters/ft/': {NOT_AN_ARCHIVE}"]


def test_a_network_isolated_model_is_refused_its_hub_weights_with_what_to_do():
    hub = {"hub": "org/model", "revision": "abc123", "params_b": 8}
    problems = _problems(
        [
            {"name": "regulated", "isolation": "dedicated", "isolation_reason": "PII", **hub},
            {"name": "a", "group": "tenant-a", **hub},
            {"name": "b", "group": "tenant-a", "params_b": 8},
            {"name": "c", "group": "tenant-b", **hub},
        ]
    )
    assert problems == [
        "  - models[0].hub='org/model': conflicts with isolation: dedicated; a dedicated model "
        "runs network-isolated and makes no outbound call, so it cannot download from the "
        "hub: put the weights in S3 and give weights_uri instead of hub (e.g. "
        "`huggingface-cli download <hub id> --revision <commit> --local-dir <dir>`, then "
        "`aws s3 cp --recursive <dir> s3://<bucket>/<path>/`)",
        "  - models[1].group='tenant-a': puts hub models (a) with models whose weights are in "
        "S3 (b) on one endpoint, which would then not be network-isolated: give the hub "
        "models weights_uri, or another group",
    ]
