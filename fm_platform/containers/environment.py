"""The environment that makes each container family serve what the plan sized.

The planner sizes each copy for a tensor-parallel degree, a number of concurrent sequences
and a context length in a dtype; left to their defaults, the containers would serve
something else (vLLM takes the model's whole context, TGI and TEI their own batch
limits). :func:`serving_environment` writes the family's own variable for each:

- ``lmi`` (DJL Serving; djl-serving ``serving/docs/lmi/deployment_guide/configurations.md``:
  ``option.<property>`` is read from ``OPTION_<PROPERTY>``): ``HF_MODEL_ID`` (hub id, or
  the weights' directory ``/opt/ml/model``), ``OPTION_REVISION`` (``option.revision``, the
  hub commit), ``OPTION_ROLLING_BATCH`` (``vllm`` on GPU, ``auto`` with transformers-neuronx
  on Neuron), ``OPTION_TENSOR_PARALLEL_DEGREE``, ``OPTION_MAX_ROLLING_BATCH_SIZE``,
  ``OPTION_MAX_MODEL_LEN`` (vLLM; on Neuron ``OPTION_N_POSITIONS``, "total sequence
  length, input + output" of ``tnx_user_guide.md``, LMI >= 0.26, as the neuronx image
  0.29 documents it; the guide left djl-serving with its Neuron support in November 2025),
  ``OPTION_DTYPE`` (``fp32``, ``fp16``, ``bf16``), ``OPTION_QUANTIZE`` (weights quantized
  at load only: :data:`_QUANTIZE`), and ``OPTION_ENABLE_LORA`` with
  ``OPTION_MAX_LORAS`` (unique adapters in one batch; LMI's default 4: the plan reserves
  room for every adapter of the base) and ``OPTION_MAX_LORA_RANK`` (their largest rank)
  on a base serving LoRA adapters (djl-serving ``serving/docs/adapters.md``,
  "Configurations", LMI >= 0.27.0), ``OPTION_PREDICT_TIMEOUT`` (how long a request waits
  for a slot in a full rolling batch, and each call into the engine, before it fails:
  ``RollingBatch.addInput``; default 120 s) and ``SERVING_JOB_QUEUE_SIZE``
  (``job_queue_size``: requests queued beyond it are rejected; default 1000);
- ``tgi`` (text-generation-launcher's arguments, read from the environment; the SageMaker
  image shards over ``SM_NUM_GPUS``): ``HF_MODEL_ID``, ``HF_MODEL_REVISION``,
  ``SM_NUM_GPUS``, ``NUM_SHARD``, ``MAX_CONCURRENT_REQUESTS`` (requests past it get 429),
  ``MAX_BATCH_SIZE`` (sequences in the running batch; the others wait in TGI's queue),
  ``MAX_INPUT_TOKENS``,
  ``MAX_TOTAL_TOKENS``, ``DTYPE`` (``float16`` or ``bfloat16``: TGI has no float32, so a
  catalog refuses ``dtype: fp32`` on it) or ``QUANTIZE`` (TGI refuses both at once;
  huggingface/text-generation-inference ``launcher/src/main.rs``; the SageMaker entrypoint
  ``sagemaker-entrypoint.sh`` maps ``HF_MODEL_ID``, ``HF_MODEL_REVISION`` and
  ``SM_NUM_GPUS`` to ``MODEL_ID``, ``REVISION`` and ``NUM_SHARD``);
- ``tei`` (text-embeddings-router's arguments, huggingface/text-embeddings-inference
  ``router/src/main.rs``; the SageMaker entrypoint maps ``HF_MODEL_ID`` and
  ``HF_MODEL_REVISION`` to ``MODEL_ID`` and ``REVISION``): ``HF_MODEL_ID``,
  ``HF_MODEL_REVISION``, ``MAX_CONCURRENT_REQUESTS`` (one permit per input: requests
  accepted x inputs per request), ``MAX_BATCH_TOKENS`` (the tokens the plan holds
  activations for, at least one whole context), ``MAX_CLIENT_BATCH_SIZE`` (inputs per
  request, at least TEI's default 32), ``DTYPE`` (``float16`` or ``float32``);
- ``huggingface`` (the SageMaker Hugging Face inference toolkit): ``HF_MODEL_ID``,
  ``HF_MODEL_REVISION``, ``HF_TASK`` (the transformers pipeline of the task),
  ``SAGEMAKER_MODEL_SERVER_WORKERS`` = 1 (the plan holds one copy of the weights) and
  ``SAGEMAKER_MODEL_SERVER_TIMEOUT`` (the model server's ``default_response_timeout``,
  default 60 s: aws/sagemaker-inference-toolkit ``environment.py``, ``model_server.py``);
- ``pytorch`` and ``stabilityai`` (TorchServe / multi-model server):
  ``SAGEMAKER_MODEL_SERVER_WORKERS`` = 1 and ``SAGEMAKER_MODEL_SERVER_TIMEOUT``
  (aws/sagemaker-pytorch-inference-toolkit ``torchserve.py``);
- an explicit image: nothing is planned into it; the catalog's ``environment`` only.

A gated hub model's token is ``HF_TOKEN`` (and ``HF_API_TOKEN`` for the toolkit), written as
a CloudFormation dynamic reference to the secret: the template never holds the token, but
the deployed model's environment does (DescribeModel shows it to whoever may call it).
The catalog's ``environment`` is applied last and wins. docs/catalog.md, "Serving limits",
lists every variable with what its engine does at the limit (refuse or queue).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: Where SageMaker puts a model's artifacts in the container.
MODEL_DIRECTORY = "/opt/ml/model"
#: Per catalog dtype: (LMI OPTION_DTYPE, TGI/TEI DTYPE) of the activations.
_DTYPES = {
    "fp32": ("fp32", "float32"),
    "fp16": ("fp16", "float16"),
    "bf16": ("bf16", "bfloat16"),
}
#: Weights quantized at load (catalog dtype -> LMI OPTION_QUANTIZE / TGI QUANTIZE): fp8
#: casts; int8 quantizes 16-bit weights with bitsandbytes. Both are the runtime
#: quantizations LMI's vLLM guide lists ("Runtime Quantization": fp8, bitsandbytes) and
#: values of TGI's ``--quantize``. On Neuron, transformers-neuronx quantizes int8 only, as
#: ``static_int8`` (djl-serving ``tnx_user_guide.md``, "Quantization").
_QUANTIZE = {"fp8": ("fp8", "fp8"), "int8": ("bitsandbytes", "bitsandbytes")}
NEURON_QUANTIZE = {"int8": "static_int8"}
#: int4 weights are pre-quantized (AWQ): neither engine is told a method. LMI's vLLM guide
#: ("Ahead of time (AOT) quantization"): "you should not set the option.quantize
#: configuration" (naming awq keeps vLLM from its Marlin kernels); TGI's ``--quantize``: "It
#: is not necessary to specify this option for pre-quantized models". Their activations run
#: in fp16, the one dtype vLLM's AWQ kernels take (``AWQConfig.get_supported_act_dtypes``).
PREQUANTIZED = "int4"
#: TEI's own ``--max-client-batch-size`` (router/src/main.rs): a request of more inputs
#: than this is refused; the limit is never set below it.
TEI_CLIENT_BATCH_SIZE = 32
#: The transformers pipeline of each task, for the Hugging Face toolkit's ``HF_TASK``.
PIPELINES = {
    "classification": "text-classification",
    "embedding": "feature-extraction",
    "reranking": "text-classification",
    "speech-to-text": "automatic-speech-recognition",
    "image-generation": "text-to-image",
    "text-generation": "text-generation",
}


@dataclass(frozen=True, kw_only=True)
class ServingSettings:
    """What the plan sized one copy for.

    family: the container family; hardware: ``gpu``, ``neuron`` or ``cpu``; task: the
    catalog task. tensor_parallel: devices per copy (0 on CPU). max_concurrency:
    sequences a copy serves at once. max_model_len: tokens per sequence (prompt + output).
    max_input_tokens: prompt tokens per request. dtype: the catalog dtype; half: the
    16-bit activation dtype the type runs (``fp16`` where the GPU has no bf16). hub,
    revision: the hub id and revision (None: the weights are in ``/opt/ml/model``).
    token_secret_arn: the Secrets Manager ARN of the hub token. adapters: LoRA adapters
    served on the copy (LMI only), max_lora_rank: their largest rank.
    requests_accepted: requests a copy accepts at once, running and waiting (at least
    ``max_concurrency``; what the traffic sends it, :func:`fm_platform.fleet.outputs.serving.
    model_serving`); inputs_per_request: the texts or documents one request carries;
    batch_tokens: the tokens the plan holds activations for in one batch (encoders);
    request_timeout_s: the seconds a request may take (the endpoint kind's limit).
    """

    family: str
    hardware: str
    task: str
    tensor_parallel: int
    max_concurrency: int
    max_model_len: int
    max_input_tokens: int
    dtype: str = "bf16"
    half: str = "bf16"
    hub: str | None = None
    revision: str | None = None
    token_secret_arn: str | None = None
    adapters: int = 0
    max_lora_rank: int = 0
    requests_accepted: int = 0
    inputs_per_request: int = 1
    batch_tokens: int = 0
    request_timeout_s: int = 60

    @property
    def accepted(self) -> int:
        """Requests a copy accepts at once (running and waiting), at least the sequences it
        runs."""
        return max(self.max_concurrency, self.requests_accepted)


def secret_reference(arn: str) -> str:
    """A CloudFormation dynamic reference to the secret string of ``arn``."""
    return "{{resolve:secretsmanager:" + arn + ":SecretString}}"


def _revision(s: ServingSettings, name: str) -> dict[str, str]:
    return {name: s.revision} if s.hub and s.revision else {}


def _activation(s: ServingSettings) -> tuple[str, str]:
    if s.dtype == PREQUANTIZED:
        return _DTYPES["fp16"]
    if s.dtype in _QUANTIZE or s.dtype == "bf16":
        return _DTYPES[s.half]
    return _DTYPES[s.dtype]


def _lmi(s: ServingSettings) -> dict[str, str]:
    neuron = s.hardware == "neuron"
    env = {
        "HF_MODEL_ID": s.hub or MODEL_DIRECTORY,
        "OPTION_ROLLING_BATCH": "auto" if neuron else "vllm",
        "OPTION_TENSOR_PARALLEL_DEGREE": str(max(1, s.tensor_parallel)),
        "OPTION_MAX_ROLLING_BATCH_SIZE": str(s.max_concurrency),
        "OPTION_N_POSITIONS" if neuron else "OPTION_MAX_MODEL_LEN": str(s.max_model_len),
        "OPTION_DTYPE": _activation(s)[0],
        "OPTION_PREDICT_TIMEOUT": str(s.request_timeout_s),
        "SERVING_JOB_QUEUE_SIZE": str(s.accepted),
    }
    env.update(_revision(s, "OPTION_REVISION"))
    if s.adapters:
        env["OPTION_ENABLE_LORA"] = "true"
        env["OPTION_MAX_LORAS"] = str(s.adapters)
        if s.max_lora_rank:
            env["OPTION_MAX_LORA_RANK"] = str(s.max_lora_rank)
    if neuron and s.dtype in NEURON_QUANTIZE:
        env["OPTION_QUANTIZE"] = NEURON_QUANTIZE[s.dtype]
    elif not neuron and s.dtype in _QUANTIZE:
        env["OPTION_QUANTIZE"] = _QUANTIZE[s.dtype][0]
    return env


def _tgi(s: ServingSettings) -> dict[str, str]:
    shards = str(max(1, s.tensor_parallel))
    env = {
        "HF_MODEL_ID": s.hub or MODEL_DIRECTORY,
        "SM_NUM_GPUS": shards,
        "NUM_SHARD": shards,
        "MAX_CONCURRENT_REQUESTS": str(s.accepted),
        "MAX_BATCH_SIZE": str(s.max_concurrency),
        "MAX_INPUT_TOKENS": str(s.max_input_tokens),
        "MAX_TOTAL_TOKENS": str(s.max_model_len),
        **_revision(s, "HF_MODEL_REVISION"),
    }
    if s.dtype in _QUANTIZE:
        env["QUANTIZE"] = _QUANTIZE[s.dtype][1]
    else:
        env["DTYPE"] = _activation(s)[1]
    return env


def _tei(s: ServingSettings) -> dict[str, str]:
    inputs = max(1, s.inputs_per_request)
    return {
        "HF_MODEL_ID": s.hub or MODEL_DIRECTORY,
        # one permit per input: a batched request's inputs wait for theirs, a single
        # input past the limit is refused (429)
        "MAX_CONCURRENT_REQUESTS": str(s.accepted * inputs),
        # one input of the whole context fits a batch (TEI >= 1.9 refuses to start
        # otherwise); the plan holds activations for batch_tokens
        "MAX_BATCH_TOKENS": str(max(s.max_model_len, s.batch_tokens)),
        "MAX_CLIENT_BATCH_SIZE": str(max(inputs, TEI_CLIENT_BATCH_SIZE)),
        # TEI runs float16 or float32; CPU types run float32
        "DTYPE": "float32" if s.hardware == "cpu" or s.dtype == "fp32" else "float16",
        **_revision(s, "HF_MODEL_REVISION"),
    }


def _toolkit(s: ServingSettings) -> dict[str, str]:
    env = {"HF_TASK": PIPELINES[s.task], **_workers(s)}
    if s.hub:
        env["HF_MODEL_ID"] = s.hub
    return env | _revision(s, "HF_MODEL_REVISION")


def _workers(s: ServingSettings) -> dict[str, str]:
    return {
        "SAGEMAKER_MODEL_SERVER_WORKERS": "1",
        "SAGEMAKER_MODEL_SERVER_TIMEOUT": str(s.request_timeout_s),
    }


_FAMILIES = {
    "lmi": _lmi,
    "tgi": _tgi,
    "tei": _tei,
    "huggingface": _toolkit,
    "pytorch": _workers,
    "stabilityai": _workers,
}


def serving_environment(
    settings: ServingSettings, extra: Mapping[str, str | int | float] | None = None
) -> dict[str, str]:
    """The container environment of ``settings`` (module docstring), then ``extra`` (the
    catalog's ``environment``, which wins)."""
    build = _FAMILIES.get(settings.family)
    env = build(settings) if build is not None else {}
    if build is not None and settings.token_secret_arn:
        env["HF_TOKEN"] = secret_reference(settings.token_secret_arn)
        if settings.family == "huggingface":
            env["HF_API_TOKEN"] = env["HF_TOKEN"]
    env.update({k: str(v) for k, v in (extra or {}).items()})
    return env
