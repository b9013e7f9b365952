"""What one model needs: weights, KV cache, request shape and latency objective, resolved
from its catalog entry, its architecture and the documented defaults.

Device memory of one copy on ``tp`` devices, as the engines use it (:class:`MemoryParts`;
tensor parallelism splits the attention heads, so ``tp`` must divide them; KV heads are
replicated when ``tp`` exceeds them):

    weights = parameters x bytes per parameter of the dtype or quantization
    KV cache per token = layers x KV heads x head dimension x 2 (K and V) x bytes per value
                         (2, or 4 for fp32 models; quantized weights keep 16-bit KV);
                         a sliding-window layer holds at most its window per sequence
    KV pool = paged (vLLM and LMI allocate 16-token blocks, not a context per sequence):
              concurrency x (prompt + output tokens), and at least one sequence of the
              full context, so that a request of the longest allowed length fits
    headroom = activations of one scheduler step (2,048 batched tokens x hidden size x
               32 bytes, plus fp32 logits over the vocabulary per running sequence) +
               0.5 GiB of CUDA graphs per device (generative); the activations of one
               request (encoders); the request's activations and caches at its audio
               length (speech: :mod:`fm_platform.fleet.sizing.speech`) or resolution (diffusion:
               :mod:`fm_platform.fleet.sizing.diffusion`)
    adapters = a base's room for its LoRA adapters, which vLLM reserves on each copy: one
               slot per adapter it may hold at once (``OPTION_MAX_LORAS``: every adapter
               of the base) at the largest rank (``OPTION_MAX_LORA_RANK``), each
               rank x (in + out dimensions, summed over the adapted projections) x layers
               x bytes per value (:func:`lora_adapter_bytes`)
    fits when weights + KV pool + headroom + adapters <= the engine's memory fraction of the ``tp``
    devices: 0.9 for generative engines (vLLM's default ``gpu_memory_utilization``, which
    LMI passes on; the rest is the CUDA context and NCCL buffers), 0.95 otherwise (a
    PyTorch server allocates what it uses; the CUDA context takes the rest)

Encoders, rerankers, classifiers, diffusion pipelines and speech models keep no KV cache
across requests. ``memory_gib`` in the catalog replaces the whole sum.

A model without architecture figures is sized only from fields the catalog gives; what
is missing is assumed and named in ``defaults``: the KV cache of a grouped-query-attention
model of its size (Llama-3.1-8B's 128 KiB per token per 8.03 B parameters, scaled;
``kv_cache``), a hidden size of a dense model of its size (``hidden_size``). Defaults by
latency class (strict / standard / relaxed): ``context_tokens`` 4096 / 8192 / 8192 (at
most the architecture's context), and a p50 latency objective
of first-token allowance + ``output_tokens`` x per-token target: 500 ms + 30 ms, 1000 ms +
60 ms, 3000 ms + 150 ms per token; ``batch`` takes relaxed's. Whatever the objective, a
kind serves the model only on types whose request latency fits the kind's request limit
(real-time 60 s, asynchronous 1 hour: :mod:`fm_platform.fleet.deciding.kinds`). Requests default
to 1024 prompt and 256 output tokens for text generation, 256 and 0 for embedding,
reranking and classification, 30 s of audio (``audio_seconds``; 3.3 output tokens a second)
for speech, one 1024x1024 image at the pipeline's steps for image generation (p50
objective 5 / 20 / 60 s by class).
``peak_rpm`` defaults to 60.

What one request computes (:attr:`Needs.request_flops`, the compute-bound estimate of
:mod:`fm_platform.fleet.sizing.performance`): 2 x active parameters x prompt tokens x inputs per
request (encoders: ``inputs_per_request`` texts or documents, by default 1, batched by the
engine as one forward pass; their activations are held for the same tokens);
the encoder's 30 s windows plus the decoder's reads per output token (speech,
:mod:`fm_platform.fleet.sizing.speech`); the denoiser's steps x guidance passes at the
resolution, the text encoders and the VAE decode (image generation,
:mod:`fm_platform.fleet.sizing.diffusion`, at an efficiency calibrated on measured rows).
"""

from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fm_platform.fleet.deciding.kinds import BATCH
from fm_platform.fleet.models.architectures import Architecture, architecture
from fm_platform.fleet.models.catalog import (
    DEFAULT_ADAPTER_RANK,
    DTYPE_BYTES,
    GENERATIVE_TASKS,
    Catalog,
    ModelEntry,
)
from fm_platform.fleet.models.weights import container_of
from fm_platform.fleet.sizing.diffusion import IMAGE, default_steps, image_work, resolution
from fm_platform.fleet.sizing.request_work import RequestWork
from fm_platform.fleet.sizing.speech import (
    DEFAULT_AUDIO_S,
    SPEECH,
    default_output_tokens,
    speech_work,
)
from fm_platform.rules.model_container import is_prefix

GIB = 1024**3
#: vLLM's default gpu_memory_utilization (LMI passes it on): the share of device memory a
#: generative engine uses; other servers leave only the CUDA context.
ENGINE_MEMORY_FRACTION, OTHER_MEMORY_FRACTION = 0.9, 0.95
#: vLLM allocates the KV cache in blocks of this many tokens per sequence.
KV_BLOCK_TOKENS = 16
#: Tokens one scheduler step computes at most (vLLM's max_num_batched_tokens for its
#: OpenAI-compatible server), and activation bytes per batched token per hidden unit.
BATCHED_TOKENS, ACTIVATION_BYTES_PER_HIDDEN = 2048, 32
#: CUDA graphs a generative engine captures, per device (GiB).
CUDA_GRAPH_GIB = 0.5
#: Host memory one copy asks for at least (MiB); weights pass through host memory.
MIN_HOST_MIB = 2048
DEFAULT_PEAK_RPM = 60.0
#: Llama-3.1-8B (grouped-query attention): 32 layers x 8 KV heads x 128 x 2 x 2 bytes per
#: token, per 8.03 B parameters: the KV cache assumed for a model of unknown family.
GQA_KV_BYTES_PER_PARAM = 32 * 8 * 128 * 2 * 2 / 8.03e9
CLASS_CONTEXT = {"strict": 4096, "standard": 8192, "relaxed": 8192, BATCH: 8192}
#: The most sequences a text-generation copy runs at once unless the catalog sets
#: ``concurrency``: vLLM's default ``max_num_seqs`` (vllm ``engine/arg_utils.py``), which
#: LMI passes on; the copy runs the most of them its memory and objective allow
#: (:mod:`fm_platform.fleet.sizing.performance`).
MAX_CONCURRENCY = 256
#: (first-token allowance ms, per-output-token target ms) of the default p50 objective.
CLASS_LATENCY = {
    "strict": (500.0, 30.0),
    "standard": (1000.0, 60.0),
    "relaxed": (3000.0, 150.0),
    BATCH: (3000.0, 150.0),
}
GENERATIVE_REQUEST = (1024, 256)
ENCODER_REQUEST = (256, 0)
#: Speech: one 30 s window of encoder frames (output tokens follow the audio:
#: :func:`fm_platform.fleet.sizing.speech.default_output_tokens`); image: its text prompt.
SPEECH_REQUEST, IMAGE_REQUEST = (1500, 0), (77, 0)
#: The default p50 objective of one image by latency class (ms).
IMAGE_OBJECTIVE_MS = {"strict": 5000.0, "standard": 20000.0, "relaxed": 60000.0, BATCH: 60000.0}


@dataclass(frozen=True)
class MemoryParts:
    """Device memory of one copy (GiB): weights, KV pool, headroom; ``device_gib`` their
    sum with ``adapters_gib`` (or the catalog's ``memory_gib``)."""

    weights_gib: float
    kv_pool_gib: float
    headroom_gib: float
    device_gib: float
    adapters_gib: float = 0.0


@dataclass(frozen=True)
class Needs:
    """One model's resolved requirements. ``defaults`` names every input that came from a
    default rather than the catalog or an architecture; ``batch``: its callers do not wait
    (``latency_class: batch``); ``payload_mb``: its largest request body (None: small).
    ``sliding_share``: the share of the KV cache in sliding-window layers, which hold at
    most ``sliding_window`` tokens per sequence. ``request_flops`` and
    ``decode_bytes_per_token``: what one request of a model that does not decode in batches
    computes and reads (module docstring)."""

    name: str
    task: str
    generative: bool
    architecture: str | None
    params_b: float
    active_params_b: float
    dtype: str
    weights_gib: float
    memory_gib: float | None
    layers: int | None
    attention_heads: int | None
    kv_heads: int | None
    head_dim: int | None
    hidden_size: int
    vocab_size: int
    kv_bytes_per_token: float
    sliding_share: float
    sliding_window: int | None
    prompt_tokens: int
    output_tokens: int
    context_tokens: int
    concurrency: int
    latency_objective_ms: float
    batch: bool
    payload_mb: float | None
    peak_rpm: float
    active_hours: float
    rpm_override: float | None
    benchmark: tuple[Path, str | None] | None
    allow_fp16: bool
    neuron_compiled: bool
    instance_family: str | None
    framework: str
    defaults: tuple[str, ...]
    request_flops: float
    decode_bytes_per_token: float
    fixed_headroom_gib: float
    #: the share of the devices' peak one request runs at (None: the estimator's default)
    #: and what its work and that share came from
    compute_efficiency: float | None = None
    work_detail: str = ""
    #: the container family (:func:`fm_platform.fleet.models.weights.container_of`)
    container: str = "lmi"
    #: its ``weights_uri`` is a prefix of uncompressed files (not an archive, the hub or
    #: the artifacts bucket): a serverless endpoint cannot read them
    uncompressed_weights: bool = False
    #: LoRA adapters a copy holds at once, their largest rank, and the room they take (GiB)
    lora_slots: int = 0
    lora_rank: int = 0
    adapters_gib: float = 0.0
    #: inputs one request carries (texts per embed call, documents per rerank), each
    #: ``prompt_tokens`` long: the engine batches them as one request's work
    inputs_per_request: int = 1
    #: a mixture of experts: experts per layer and how many each token is routed to
    experts: int | None = None
    experts_per_token: int | None = None

    def _kv_sequence_bytes(self, tokens: int) -> float:
        tokens = math.ceil(tokens / KV_BLOCK_TOKENS) * KV_BLOCK_TOKENS
        window = min(tokens, self.sliding_window or tokens)
        share = self.sliding_share
        return self.kv_bytes_per_token * ((1 - share) * tokens + share * window)

    def kv_gib(self, tensor_parallel: int, concurrency: int) -> float:
        """The paged KV pool for ``concurrency`` sequences of prompt + output tokens, and at
        least one of ``context_tokens``, on ``tensor_parallel`` devices (KV heads
        replicated when there are fewer than devices)."""
        if not self.generative:
            return 0.0
        request = self._kv_sequence_bytes(self.prompt_tokens + self.output_tokens)
        pool = max(concurrency * request, self._kv_sequence_bytes(self.context_tokens))
        if self.kv_heads and tensor_parallel > self.kv_heads:
            pool *= tensor_parallel / self.kv_heads
        return pool / GIB

    def weights_read_bytes(self, tokens: int) -> float:
        """Weight bytes one forward pass over ``tokens`` tokens reads (a decode step: one
        token per running sequence). A dense model reads all of them. A mixture of experts
        of E experts routing each token to k of them reads its shared weights and the
        experts its tokens touch: a token leaves a given expert out with probability
        1 - k/E (it picks k distinct experts of E), so ``tokens`` tokens routed
        independently touch E x (1 - (1 - k/E)^tokens) of them per layer on average. The
        expert weights come from the parameters and active parameters:
        experts = (parameters - active) / (1 - k/E); shared = parameters - experts."""
        weights = self.weights_gib * GIB
        if not self.experts or not self.experts_per_token:
            return weights
        routed = self.experts_per_token / self.experts
        expert_share = (1 - self.active_params_b / self.params_b) / (1 - routed)
        touched = 1 - (1 - routed) ** tokens
        return weights * (1 - expert_share + expert_share * touched)

    def decode_step_bytes(self, tensor_parallel: int, concurrency: int) -> float:
        """Bytes one decode step reads with ``concurrency`` sequences running: the weights
        their tokens pass through and each sequence's KV cache at its mean length, prompt
        + half the output."""
        tokens = self.prompt_tokens + self.output_tokens / 2
        kv = concurrency * tokens * self.kv_read_bytes_per_token(tensor_parallel)
        return self.weights_read_bytes(concurrency) + kv

    def kv_read_bytes_per_token(self, tensor_parallel: int) -> float:
        """KV bytes a decode step reads per token of context (all devices)."""
        per_token = self.kv_bytes_per_token
        if self.kv_heads and tensor_parallel > self.kv_heads:
            per_token *= tensor_parallel / self.kv_heads
        return per_token

    def headroom_gib(self, tensor_parallel: int, concurrency: int) -> float:
        """Activations and graphs the engine keeps beside weights and KV pool."""
        if self.task in (IMAGE, SPEECH):
            return self.fixed_headroom_gib
        if not self.generative:
            tokens = self.prompt_tokens * self.inputs_per_request * max(1, concurrency)
            activations = tokens * self.hidden_size * ACTIVATION_BYTES_PER_HIDDEN / GIB
            return self.fixed_headroom_gib + activations
        step = BATCHED_TOKENS * self.hidden_size * ACTIVATION_BYTES_PER_HIDDEN
        logits = concurrency * self.vocab_size * 4
        return CUDA_GRAPH_GIB * tensor_parallel + (step + logits) / GIB

    def parts(self, tensor_parallel: int, concurrency: int) -> MemoryParts:
        """Device memory of one copy, by part (module docstring)."""
        kv = self.kv_gib(tensor_parallel, concurrency)
        headroom = self.headroom_gib(tensor_parallel, concurrency)
        total = self.memory_gib
        if total is None:
            total = self.weights_gib + kv + headroom + self.adapters_gib
        return MemoryParts(self.weights_gib, kv, headroom, total, self.adapters_gib)

    def copy_gib(self, tensor_parallel: int, concurrency: int) -> float:
        """Device memory of one copy: ``memory_gib``, else weights + KV pool + headroom +
        adapters."""
        if self.memory_gib is not None:
            return self.memory_gib
        return (
            self.weights_gib
            + self.kv_gib(tensor_parallel, concurrency)
            + self.headroom_gib(tensor_parallel, concurrency)
            + self.adapters_gib
        )

    @property
    def memory_fraction(self) -> float:
        """The share of device memory the model's engine uses (module docstring)."""
        return ENGINE_MEMORY_FRACTION if self.generative else OTHER_MEMORY_FRACTION

    def host_mib(self) -> int:
        """Host memory one copy asks for: its weights, at least 2 GiB."""
        return max(MIN_HOST_MIB, math.ceil((self.memory_gib or self.weights_gib) * 1024))

    def tp_allowed(self, tensor_parallel: int) -> bool:
        """Tensor parallelism splits attention heads: ``tp`` must divide them."""
        return not self.attention_heads or self.attention_heads % tensor_parallel == 0


def _kv(model: ModelEntry, arch: Architecture | None, params_b: float) -> tuple[float, str]:
    value_bytes = 4.0 if model.dtype == "fp32" else 2.0
    fields = (model.layers, model.kv_heads or model.attention_heads, model.head_dim)
    if all(fields):
        layers, kv_heads, head_dim = fields
        return layers * kv_heads * head_dim * 2 * value_bytes, "catalog"  # type: ignore[operator]
    if arch is not None:
        return arch.kv_bytes_per_token_per_byte * value_bytes, "architecture"
    return GQA_KV_BYTES_PER_PARAM * params_b * 1e9 * value_bytes / 2, "default"


def lora_adapter_bytes(
    rank: int,
    *,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    layers: int,
    value_bytes: float,
) -> float:
    """Device bytes of one LoRA adapter of ``rank`` on a transformer of these dimensions.

    LoRA (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", 2021,
    arXiv:2106.09685, section 4.1) adds to a projection W of d_in x d_out the matrices
    A (d_in x r) and B (r x d_out): r x (d_in + d_out) values. The adapted projections are
    the attention's query, key, value and output (the paper's section 7.1 adapts attention
    weights only; PEFT's and vLLM's common targets include them): q and o map the hidden
    size to heads x head dimension and back, k and v to KV heads x head dimension.
    """
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    per_layer = (hidden + q_out) * 2 + (hidden + kv_out) * 2  # q, o; k, v
    return rank * per_layer * layers * value_bytes


def _adapters_gib(
    ranks: tuple[int, ...], dims: tuple[int | None, ...], hidden: int, value_bytes: float
) -> float:
    """The room a base reserves for ``ranks`` (one slot per adapter at the largest rank)."""
    layers, heads, kv_heads, head_dim = dims
    if not ranks or not (layers and heads and head_dim):
        return 0.0
    size = lora_adapter_bytes(
        max(ranks),
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads or heads,
        head_dim=head_dim,
        layers=layers,
        value_bytes=value_bytes,
    )
    return len(ranks) * size / GIB


def _dense_hidden(params_b: float, layers: int | None) -> int:
    """The hidden size of a dense transformer of ``params_b`` (12 x hidden^2 per layer)."""
    return int(math.sqrt(params_b * 1e9 / (12 * (layers or 32))))


def _request_work(
    model: ModelEntry,
    task: str,
    arch: Architecture | None,
    sizes: tuple[float, float, int, int | None],
    prompt: int,
    output: int,
    defaults: list[str],
) -> RequestWork:
    """What one request of a model that does not decode in batches computes (module
    docstring); the inputs that came from defaults are added to ``defaults``."""
    params_b, active_b, hidden, layers = sizes
    if task == IMAGE and arch is not None and arch.denoiser_params_b:
        steps = model.steps or default_steps(arch)
        if model.steps is None:
            defaults.append("steps")
        width, height, defaulted = resolution(model)
        if defaulted:
            defaults.append("resolution")
        return image_work(arch, steps, width, height)
    if task == SPEECH:
        if model.audio_seconds is None:
            defaults.append("audio_seconds")
        if arch is None:
            defaults.append("decoder_share")
        value_bytes = 4.0 if model.dtype == "fp32" else 2.0
        audio = model.audio_seconds or DEFAULT_AUDIO_S
        weight_bytes = DTYPE_BYTES[model.dtype]
        return speech_work(arch, params_b, hidden, layers, audio, output, weight_bytes, value_bytes)
    inputs = model.inputs_per_request or 1
    detail = f"{inputs} inputs of {prompt} tokens per request" if inputs > 1 else ""
    return RequestWork(2 * active_b * 1e9 * prompt * inputs, 0.0, 0.5, None, detail)


def _task(model: ModelEntry, arch: Architecture | None, defaults: list[str]) -> str:
    """The model's task: its own, its architecture's, else text generation (a default)."""
    if model.task is None and arch is None:
        defaults.append("task")
    return model.task or (arch.task if arch else "text-generation")


def _params_b(model: ModelEntry, arch: Architecture | None) -> float:
    """Billions of parameters: the catalog's, the architecture's, else what ``memory_gib``
    holds at the model's dtype."""
    params_b = model.params_b or (arch.params_b if arch else None)
    if params_b is None:  # memory_gib only: the weights are what the catalog says a copy needs
        params_b = (model.memory_gib or 0) * GIB / DTYPE_BYTES[model.dtype] / 1e9
    return params_b


def _kv_per_token(
    model: ModelEntry,
    arch: Architecture | None,
    params_b: float,
    generative: bool,
    defaults: list[str],
) -> float:
    """KV cache bytes per token (:func:`_kv`); a generative model's assumed one is a default
    (unless ``memory_gib`` replaces the sizing)."""
    kv_per_token, kv_from = _kv(model, arch, params_b)
    if generative and kv_from == "default" and model.memory_gib is None:
        defaults.append("kv_cache")
    return kv_per_token


def _hidden_size(
    model: ModelEntry,
    arch: Architecture | None,
    params_b: float,
    layers: int | None,
    defaults: list[str],
) -> int:
    """The hidden size: the architecture's, else attention heads x head dimension, else a
    dense model's of its size (a default unless ``memory_gib`` replaces the sizing)."""
    if arch and arch.hidden_size:
        return arch.hidden_size
    if model.attention_heads and model.head_dim:
        return model.attention_heads * model.head_dim
    if model.memory_gib is None:
        defaults.append("hidden_size")
    return _dense_hidden(params_b, layers)


def _default_request(task: str, generative: bool) -> tuple[int, int]:
    """The prompt and output tokens of a request of ``task`` by default."""
    return {
        SPEECH: SPEECH_REQUEST,
        IMAGE: IMAGE_REQUEST,
    }.get(task, GENERATIVE_REQUEST if generative else ENCODER_REQUEST)


def _prompt_tokens(
    model: ModelEntry, task: str, default: int, max_context: int | None, defaults: list[str]
) -> int:
    """Prompt tokens of one request: the catalog's, else ``default`` (at most the
    architecture's context, but for speech, whose prompt is its audio window)."""
    if model.prompt_tokens is None:
        if task not in (SPEECH, IMAGE):  # their work follows audio_seconds or steps
            defaults.append("prompt_tokens")
        if task != SPEECH:
            default = min(default, max_context or default)
    return model.prompt_tokens or default


def _output_tokens(
    model: ModelEntry, task: str, generative: bool, default: int, defaults: list[str]
) -> int:
    """Output tokens of one request: the catalog's, else those of the audio (speech), else
    ``default`` (a default for generative models)."""
    if model.output_tokens is None and generative:
        defaults.append("output_tokens")
    if model.output_tokens is not None:
        return model.output_tokens
    if task == SPEECH:
        return default_output_tokens(model.audio_seconds or DEFAULT_AUDIO_S)
    return default


def _context_tokens(
    model: ModelEntry,
    request_tokens: int,
    max_context: int | None,
    generative: bool,
    defaults: list[str],
) -> int:
    """The longest sequence: the catalog's, else the latency class's (at least one request
    of ``request_tokens``, at most the architecture's context; a default for generative
    models)."""
    if model.context_tokens is not None:
        return model.context_tokens
    context = max(CLASS_CONTEXT[model.latency_class], request_tokens)
    if generative:
        defaults.append("context_tokens")
    return min(context, max_context or context)


def _concurrency(model: ModelEntry, generative: bool) -> int:
    """The most sequences a copy may run at once: the catalog's, else the engine's
    (:data:`MAX_CONCURRENCY`) for a generative model, one otherwise; the copy runs as many
    as its memory and objective allow."""
    return model.concurrency or (MAX_CONCURRENCY if generative else 1)


def _latency_objective_ms(model: ModelEntry, task: str, output: int) -> float:
    """The p50 latency objective: the catalog's, else the latency class's, for an image or
    for the first token and ``output`` tokens after it."""
    if task == IMAGE and model.latency_p50_ms is None:
        return float(IMAGE_OBJECTIVE_MS[model.latency_class])
    first, per_token = CLASS_LATENCY[model.latency_class]
    return float(model.latency_p50_ms or first + output * per_token)


def _benchmark(model: ModelEntry, catalog: Catalog) -> tuple[Path, str | None] | None:
    """The model's benchmark file (a relative path starts at the catalog's directory) and
    experiment; None without one."""
    if model.benchmark_file is None:
        return None
    path = Path(model.benchmark_file)
    return (
        path if path.is_absolute() else catalog.base_dir / path,
        model.benchmark_experiment,
    )


def _attention(
    model: ModelEntry, arch: Architecture | None
) -> tuple[int | None, int | None, int | None]:
    """Attention heads, KV heads and head dimension: the catalog's, else the
    architecture's."""
    heads = model.attention_heads or (arch.attention_heads if arch else None)
    kv_heads = model.kv_heads or (arch.kv_heads if arch else None)
    head_dim = model.head_dim or (arch.head_dim if arch else None)
    return heads, kv_heads, head_dim


def _adapter_ranks(model: ModelEntry, catalog: Catalog, defaults: list[str]) -> tuple[int, ...]:
    """The LoRA ranks of the model's adapters (a rank not given is a default)."""
    given = catalog.adapter_ranks.get(model.name, ())
    if None in given:
        defaults.append("adapter_rank")
    return tuple(DEFAULT_ADAPTER_RANK if r is None else r for r in given)


def _architecture_figures(arch: Architecture | None) -> dict[str, Any]:
    """The fields of :class:`Needs` only an architecture gives: its vocabulary (128,000
    when unknown), sliding-window layers and experts."""
    if arch is None:
        return {
            "vocab_size": 128_000,
            "sliding_share": 0.0,
            "sliding_window": None,
            "experts": None,
            "experts_per_token": None,
        }
    return {
        "vocab_size": arch.vocab_size or 128_000,
        "sliding_share": arch.sliding_window_layers / arch.layers if arch.sliding_window else 0.0,
        "sliding_window": arch.sliding_window,
        "experts": arch.experts,
        "experts_per_token": arch.experts_per_token,
    }


def resolve(model: ModelEntry, catalog: Catalog) -> Needs:
    """The :class:`Needs` of ``model`` (see the module docstring for the rules); the inputs
    that came from defaults are named in the order they are resolved."""
    arch = architecture(model.architecture) if model.architecture else None
    defaults: list[str] = []
    task = _task(model, arch, defaults)
    generative = task in GENERATIVE_TASKS
    params_b = _params_b(model, arch)
    active_b = arch.active_params_b * params_b / arch.params_b if arch else params_b
    kv_per_token = _kv_per_token(model, arch, params_b, generative, defaults)
    layers = model.layers or (arch.layers if arch else None)
    hidden = _hidden_size(model, arch, params_b, layers, defaults)
    default_prompt, default_output = _default_request(task, generative)
    max_context = arch.max_context if arch else None
    prompt = _prompt_tokens(model, task, default_prompt, max_context, defaults)
    output = _output_tokens(model, task, generative, default_output, defaults)
    context = _context_tokens(model, prompt + output, max_context, generative, defaults)
    concurrency = _concurrency(model, generative)
    if model.peak_rpm is None:
        defaults.append("peak_rpm")
    work = _request_work(
        model, task, arch, (params_b, active_b, hidden, layers), prompt, output, defaults
    )
    heads, kv_heads, head_dim = _attention(model, arch)
    ranks = _adapter_ranks(model, catalog, defaults)
    value_bytes = 4.0 if model.dtype == "fp32" else 2.0
    adapters = _adapters_gib(ranks, (layers, heads, kv_heads, head_dim), hidden, value_bytes)
    return Needs(
        name=model.name,
        task=task,
        generative=generative,
        architecture=model.architecture,
        params_b=params_b,
        active_params_b=active_b,
        dtype=model.dtype,
        weights_gib=params_b * 1e9 * DTYPE_BYTES[model.dtype] / GIB,
        memory_gib=model.memory_gib,
        layers=layers,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        hidden_size=hidden,
        kv_bytes_per_token=kv_per_token,
        prompt_tokens=prompt,
        output_tokens=output,
        context_tokens=context,
        concurrency=concurrency,
        latency_objective_ms=_latency_objective_ms(model, task, output),
        batch=model.latency_class == BATCH,
        payload_mb=model.payload_mb,
        peak_rpm=DEFAULT_PEAK_RPM if model.peak_rpm is None else float(model.peak_rpm),
        active_hours=model.active_hours,
        rpm_override=model.rpm_per_copy,
        benchmark=_benchmark(model, catalog),
        allow_fp16=model.allow_fp16,
        neuron_compiled=model.neuron_compiled,
        instance_family=model.instance_family,
        framework=model.framework,
        defaults=tuple(defaults),
        container=container_of(model, task),
        uncompressed_weights=model.weights_uri is not None and is_prefix(model.weights_uri),
        request_flops=work.flops,
        decode_bytes_per_token=work.decode_bytes_per_token,
        fixed_headroom_gib=work.headroom_gib,
        compute_efficiency=work.efficiency,
        work_detail=work.detail,
        inputs_per_request=model.inputs_per_request or 1,
        lora_slots=len(ranks),
        lora_rank=max(ranks, default=0),
        adapters_gib=adapters,
        **_architecture_figures(arch),
    )


#: The fields of a catalog entry that its needs read, but its name and traffic
#: (``peak_rpm`` is read only for whether it is given, ``active_hours`` is copied).
_NEEDS_FIELDS = operator.attrgetter(
    *(
        f.name
        for f in dataclasses.fields(ModelEntry)
        if f.name
        not in (
            "name",
            "tenant",
            "group",
            "weights",
            "environment",
            "fallback_instance_types",
            "peak_rpm",
            "active_hours",
        )
    )
)


def needs_key(model: ModelEntry, catalog: Catalog) -> tuple:
    """What ``model``'s needs read but its name and traffic: models of ``catalog`` with
    the same key resolve alike but for those (:class:`Resolver`)."""
    return (
        _NEEDS_FIELDS(model),
        model.peak_rpm is None,
        catalog.adapter_ranks.get(model.name, ()),
    )


def alike_needs(needs: Needs) -> Needs:
    """What models alike share: ``needs`` without name, traffic and defaults (a shallow
    copy: ``dataclasses.replace`` is slow at this volume)."""
    plain = object.__new__(Needs)
    plain.__dict__.update(needs.__dict__, name="", peak_rpm=0.0, active_hours=24.0, defaults=())
    return plain


class Resolver:
    """:func:`resolve` for the models of ``catalog``, computed once per :func:`needs_key`
    (4,331 times for the 33,027 distinct entries of a 50,000-model realistic catalog) and
    copied with each model's name and traffic."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._alike: dict[tuple, Needs] = {}
        self._plain: dict[tuple, Needs] = {}

    def __call__(self, model: ModelEntry, key: tuple | None = None) -> Needs:
        """``model``'s needs; ``key``, when given, is its :func:`needs_key`."""
        if key is None:
            key = needs_key(model, self.catalog)
        alike = self._alike.get(key)
        if alike is None:
            alike = self._alike[key] = resolve(model, self.catalog)
        needs = object.__new__(Needs)  # a shallow copy: dataclasses.replace is slow
        needs.__dict__.update(
            alike.__dict__,
            name=model.name,
            peak_rpm=alike.peak_rpm if model.peak_rpm is None else float(model.peak_rpm),
            active_hours=model.active_hours,
        )
        return needs

    def alike(self, key: tuple) -> Needs:
        """:func:`alike_needs` of the models with :func:`needs_key` ``key`` (one resolved
        before), one object for all of them."""
        plain = self._plain.get(key)
        if plain is None:
            plain = self._plain[key] = alike_needs(self._alike[key])
        return plain


@cache
def _tp_degrees(count: int) -> tuple[int, ...]:
    return tuple(1 << i for i in range(count.bit_length()) if 1 << i <= count)


def tp_degrees(count: int) -> tuple[int, ...]:
    """Tensor-parallel degrees on a type with ``count`` devices: powers of two up to it."""
    return _tp_degrees(max(1, count))
