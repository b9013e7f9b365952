"""The model catalog: what a platform team knows about each model it hosts.

A catalog is YAML or JSON with ``name`` (stack name prefix, by default ``fleet``), ``models``
(a list), optional ``weights`` (the fitness priorities of every model) and ``tenants``
(``{tenant: {weights: {...}}}``, the priorities of a tenant's models). docs/planner.md, section
"Catalog fields", documents every field with its default and unit; :class:`ModelEntry`
lists them.

Every problem is collected and reported at once, each under its path, e.g.
``models[12].params_b=-1: must be > 0``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from fm_platform.fleet.deciding.kinds import BATCH, KINDS
from fm_platform.fleet.models.architectures import architecture, known_architectures
from fm_platform.fleet.models.weights import (
    check_adapters,
    check_group_sources,
    check_image_region,
    check_sources,
)
from fm_platform.fleet.sizing.diffusion import check_image_keys
from fm_platform.fleet.sizing.speech import check_speech_keys
from fm_platform.rules.pools import check_fallback_request
from fm_platform.rules.problems import Problems
from fm_platform.rules.sagemaker_model import shape_rule
from fm_platform.rules.types import dataclass_values, list_of

#: Bytes per parameter of each weight dtype.
DTYPE_BYTES = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
#: ``batch``: callers do not wait for the answer (an asynchronous endpoint may host it).
LATENCY_CLASSES = ("strict", "standard", "relaxed", BATCH)
ISOLATION = ("shared", "dedicated")
#: What a model does; generative tasks decode token by token (memory-bandwidth-bound).
TASKS = (
    "text-generation",
    "embedding",
    "reranking",
    "classification",
    "image-generation",
    "speech-to-text",
)
GENERATIVE_TASKS = ("text-generation",)
#: The tasks whose request may carry several inputs (``inputs_per_request``).
INPUT_TASKS = ("embedding", "reranking", "classification")
#: The five fitness axes (see :mod:`fm_platform.fleet.deciding.fitness`), the keys of ``weights``.
AXES = ("model_size", "latency", "isolation", "cost", "scalability")
#: Model names also name inference components and (prefixed) endpoints: keep room.
MAX_NAME_LENGTH = 48
#: The keys that size a model (one of them is required).
_SIZE_KEYS = frozenset({"architecture", "params_b", "memory_gib"})


@dataclass(frozen=True, kw_only=True)
class ModelEntry:
    """One model of the catalog. Every field but ``name`` is optional.

    Size: ``architecture`` (a built-in name, see
    :func:`fm_platform.fleet.models.architectures.known_architectures`) or ``params_b`` (billions
    of parameters) with ``layers``, ``attention_heads``, ``kv_heads``, ``head_dim`` for the
    KV cache; ``memory_gib`` replaces the computed accelerator memory of one copy.
    Traffic: ``peak_rpm`` (requests per minute at peak; by default 60), ``active_hours``
    (hours a day with traffic; by default 24). Throughput: ``rpm_per_copy`` (a measured
    override), or ``benchmark_file`` (relative to the catalog: an FMBench results CSV, a plain
    CSV of the team's measurements or an Inference Recommender result, see
    :mod:`fm_platform.fleet.sizing.profiles`) with ``benchmark_experiment`` (the FMBench experiment
    or the plain CSV's ``model``); otherwise the shipped profiles or an estimate. Requests:
    ``prompt_tokens``, ``output_tokens``, ``context_tokens``, ``concurrency`` (defaults by
    task and latency class), ``inputs_per_request`` (texts per embed or classify call,
    documents per rerank: :data:`INPUT_TASKS` only; by default 1), ``payload_mb`` (the
    largest request body in MB; by default small, within any kind's limit). Objective:
    ``latency_p50_ms`` or ``latency_class`` (``batch``: callers do not wait, an
    asynchronous endpoint may host the model).
    Placement: ``isolation`` (+ ``isolation_reason``), ``cold_start_tolerant`` (unset:
    decided by the model's cost and latency priorities), ``instance_family``, ``group``,
    ``tenant``, ``weights``. Hardware: ``dtype`` (by default bf16), ``allow_fp16`` (may run
    as fp16 on GPUs without bf16; by default false), ``neuron_compiled`` (may run on
    Inferentia/Trainium; by default false), ``framework`` (by default lmi), ``task``.
    Serving (:mod:`fm_platform.fleet.models.weights`): ``weights_uri`` + ``weights_kms_key_arn``
    or ``hub`` + ``revision`` + ``hub_token_secret``; ``container`` or ``image``;
    ``environment``; ``base_model`` + ``adapter`` (a LoRA adapter on its base) +
    ``adapter_rank`` (its LoRA rank; by default 16). Image generation
    (:mod:`fm_platform.fleet.sizing.diffusion`): ``steps``, ``width``, ``height``; speech to text
    (:mod:`fm_platform.fleet.sizing.speech`): ``audio_seconds``. ``weights``
    keeps its meaning: the model's fitness priorities. Capacity fallback:
    ``fallback_instance_types`` (``auto`` or a list of instance types: the planner gives
    the model's endpoint up to four fallback pools on which every model of the endpoint
    fits, :mod:`fm_platform.fleet.placing.pools`; by default none).
    """

    name: str
    architecture: str | None = None
    params_b: float | None = None
    memory_gib: float | None = None
    layers: int | None = None
    attention_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    task: str | None = None
    dtype: str = "bf16"
    allow_fp16: bool = False
    neuron_compiled: bool = False
    framework: str = "lmi"
    peak_rpm: float | None = None
    active_hours: float = 24.0
    rpm_per_copy: float | None = None
    benchmark_file: str | None = None
    benchmark_experiment: str | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    context_tokens: int | None = None
    concurrency: int | None = None
    inputs_per_request: int | None = None
    payload_mb: float | None = None
    latency_p50_ms: float | None = None
    latency_class: str = "standard"
    cold_start_tolerant: bool | None = None
    isolation: str = "shared"
    isolation_reason: str | None = None
    instance_family: str | None = None
    tenant: str | None = None
    group: str | None = None
    weights: dict[str, float] | None = None
    weights_uri: str | None = None
    weights_kms_key_arn: str | None = None
    hub: str | None = None
    revision: str | None = None
    hub_token_secret: str | None = None
    container: str | None = None
    image: str | None = None
    environment: dict[str, str] | None = None
    base_model: str | None = None
    adapter: str | None = None
    adapter_rank: int | None = None
    fallback_instance_types: str | list[str] | None = None
    steps: int | None = None
    width: int | None = None
    height: int | None = None
    audio_seconds: float | None = None


@dataclass(frozen=True)
class Catalog:
    """A validated catalog: its ``name`` (stack prefix), ``models`` in file order, the
    fitness ``weights`` of the catalog and per tenant, and ``base_dir`` (where relative
    ``benchmark_file`` paths start), ``warnings`` (e.g. a hub id without revision) and
    ``choice_warning_monthly`` (USD a month a group or isolation choice may cost over the
    plan without it before the run warns: :mod:`fm_platform.fleet.deciding.choices`).
    ``adapter_ranks``: each base model's LoRA adapters' ranks (:func:`lora_ranks`), kept
    when the planner leaves the adapters out."""

    name: str
    models: tuple[ModelEntry, ...]
    weights: Mapping[str, float] = field(default_factory=dict)
    tenant_weights: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    base_dir: Path = Path(".")
    warnings: tuple[str, ...] = ()
    choice_warning_monthly: float = 500.0
    adapter_ranks: Mapping[str, tuple[int | None, ...]] = field(default_factory=dict)


#: The LoRA rank of an adapter whose entry gives none (vLLM's default max_lora_rank).
DEFAULT_ADAPTER_RANK = 16


def lora_ranks(models: Sequence[ModelEntry]) -> dict[str, tuple[int | None, ...]]:
    """Each base model's adapters' LoRA ranks, in catalog order (None: not given, the
    default :data:`DEFAULT_ADAPTER_RANK`)."""
    found: dict[str, list[int | None]] = {}
    for m in models:
        if m.base_model is not None:
            found.setdefault(m.base_model, []).append(m.adapter_rank)
    return {base: tuple(ranks) for base, ranks in found.items()}


@dataclass(frozen=True, kw_only=True)
class _CatalogFile:
    models: list
    name: str = "fleet"
    weights: dict | None = None
    tenants: dict | None = None
    choice_warning_monthly: float = 500.0


def _check_weights(problems: Problems, path: str, weights: Any) -> None:
    if weights is None:
        return
    if not isinstance(weights, Mapping):
        problems.add(path, weights, "must be a mapping of " + ", ".join(AXES) + " to numbers")
        return
    for axis, value in weights.items():
        if axis not in AXES:
            problems.check_choice(f"{path}.{axis}", axis, AXES)
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            problems.add(f"{path}.{axis}", value, "must be a number >= 0")


#: Keys that must be > 0 when given, and keys that must be >= 0.
_POSITIVE_KEYS = (
    "params_b",
    "memory_gib",
    "rpm_per_copy",
    "layers",
    "attention_heads",
    "kv_heads",
    "head_dim",
    "prompt_tokens",
    "context_tokens",
    "concurrency",
    "inputs_per_request",
    "payload_mb",
    "latency_p50_ms",
    "adapter_rank",
)
_NON_NEGATIVE_KEYS = ("peak_rpm", "output_tokens")


def _check_model(
    problems: Problems,
    path: str,
    m: ModelEntry,
    families: set[str],
    bad: frozenset[str] = frozenset(),
    region: str | None = None,
) -> list[str]:
    """Every problem of ``m`` under ``path``. ``bad``: the keys the entry gave with a value
    of the wrong type (already reported; their defaults stand in), which the checks that
    combine keys leave alone rather than report a second, consequent problem."""
    _check_name(problems, path, m)
    _check_size(problems, path, m, bad)
    _check_ranges(problems, path, m)
    _check_serving_choices(problems, path, m, bad)
    task = _task_of(m)
    if "task" not in bad and "architecture" not in bad:
        _check_inputs(problems, f"{path}.inputs_per_request", m.inputs_per_request, task)
        check_image_keys(problems, path, m, task)
        check_speech_keys(problems, path, m, task)
    _check_placement_keys(problems, path, m, families, bad)
    _check_needed_keys(problems, path, m, bad)
    _check_weights(problems, f"{path}.weights", m.weights)
    check_fallback_request(problems, f"{path}.fallback_instance_types", m.fallback_instance_types)
    if m.image is not None and region is not None:
        check_image_region(problems, path, m.image, region)
    known_task = None if bad & {"task", "architecture"} else task
    return check_sources(problems, path, m, known_task)


def _check_name(problems: Problems, path: str, m: ModelEntry) -> None:
    """The name is a valid endpoint name of at most :data:`MAX_NAME_LENGTH` characters."""
    if m.name is not None and (
        shape_rule("EndpointName").problem(m.name) is not None or len(m.name) > MAX_NAME_LENGTH
    ):
        problems.add(
            f"{path}.name",
            m.name,
            f"must be 1-{MAX_NAME_LENGTH} letters, digits and single hyphens, starting and "
            "ending with a letter or digit",
        )


def _check_size(problems: Problems, path: str, m: ModelEntry, bad: frozenset[str]) -> None:
    """A known architecture, or a size given some other way (an adapter is sized with its
    base)."""
    if m.architecture is not None:
        problems.check_choice(f"{path}.architecture", m.architecture, known_architectures())
    elif (
        m.params_b is None
        and m.memory_gib is None
        and m.base_model is None
        and not bad & _SIZE_KEYS
    ):
        problems.add(path, m.name, "give architecture, params_b or memory_gib")


def _check_ranges(problems: Problems, path: str, m: ModelEntry) -> None:
    """Numbers in their ranges, and KV heads that divide the attention heads."""
    for key in _POSITIVE_KEYS:
        value = getattr(m, key)
        if value is not None and value <= 0:
            problems.add(f"{path}.{key}", value, "must be > 0")
    for key in _NON_NEGATIVE_KEYS:
        value = getattr(m, key)
        if value is not None and value < 0:
            problems.add(f"{path}.{key}", value, "must be >= 0")
    if not 0 <= m.active_hours <= 24:
        problems.add(f"{path}.active_hours", m.active_hours, "must be between 0 and 24")
    if m.kv_heads and m.attention_heads and m.attention_heads % m.kv_heads:
        problems.add(
            f"{path}.kv_heads", m.kv_heads, f"must divide attention_heads ({m.attention_heads})"
        )


def _check_serving_choices(
    problems: Problems, path: str, m: ModelEntry, bad: frozenset[str]
) -> None:
    """Dtype, latency class, isolation and task among their choices, and a request body
    some kind takes."""
    problems.check_choice(f"{path}.dtype", m.dtype, DTYPE_BYTES)
    problems.check_choice(f"{path}.latency_class", m.latency_class, LATENCY_CLASSES)
    if m.payload_mb is not None and m.payload_mb > 0 and "latency_class" not in bad:
        _check_payload(problems, f"{path}.payload_mb", m.payload_mb, m.latency_class == BATCH)
    problems.check_choice(f"{path}.isolation", m.isolation, ISOLATION)
    if m.task is not None:
        problems.check_choice(f"{path}.task", m.task, TASKS)


def _check_placement_keys(
    problems: Problems, path: str, m: ModelEntry, families: set[str], bad: frozenset[str]
) -> None:
    """A dedicated model says why and joins no group; a preferred family is known."""
    if m.isolation == "dedicated" and not m.isolation_reason and "isolation_reason" not in bad:
        problems.add(f"{path}.isolation_reason", None, "say why the model needs its own endpoint")
    if m.instance_family is not None and m.instance_family not in families:
        problems.check_choice(f"{path}.instance_family", m.instance_family, sorted(families))
    if m.group is not None and m.isolation == "dedicated":
        problems.add(
            f"{path}.group",
            m.group,
            "conflicts with isolation: dedicated, which needs the model's own endpoint; "
            "drop one of them",
        )


def _check_needed_keys(problems: Problems, path: str, m: ModelEntry, bad: frozenset[str]) -> None:
    """Keys that mean something only with another: a benchmark experiment needs its file,
    an adapter rank its base model."""
    if (
        m.benchmark_experiment is not None
        and m.benchmark_file is None
        and "benchmark_file" not in bad
    ):
        problems.add(f"{path}.benchmark_experiment", m.benchmark_experiment, "needs benchmark_file")
    if m.adapter_rank is not None and m.base_model is None and "base_model" not in bad:
        problems.add(f"{path}.adapter_rank", m.adapter_rank, "needs base_model and adapter")


def _task_of(m: ModelEntry) -> str | None:
    """The model's task: its own, else its architecture's, else text generation."""
    if m.task is not None:
        return m.task
    if m.architecture is None:
        return "text-generation"
    try:
        return architecture(m.architecture).task
    except KeyError:  # an unknown architecture, reported already
        return None


def _check_inputs(problems: Problems, field: str, inputs: int | None, task: str | None) -> None:
    """Several inputs per request only where the task's request carries a list of them."""
    if inputs is not None and inputs > 1 and task is not None and task not in INPUT_TASKS:
        problems.add(
            field,
            inputs,
            f"a {task} request carries one input; inputs_per_request is for "
            + ", ".join(INPUT_TASKS)
            + " models (texts per call, documents per rerank)",
        )


def _check_payload(problems: Problems, field: str, payload_mb: float, batch: bool) -> None:
    """A request body some kind takes for a model of that latency class."""
    if any(k.refuses(batch, payload_mb) is None for k in KINDS.values()):
        return
    limits = {k.max_payload_mb for k in KINDS.values() if not k.batch_only}
    largest = max(k.max_payload_mb for k in KINDS.values())
    allowed = f"at most {largest:g} MB"
    if not batch and payload_mb <= largest:
        allowed = (
            f"a real-time request body is at most {max(limits):g} MB; larger ones need an "
            f"asynchronous endpoint: set latency_class: {BATCH} (up to {largest:g} MB)"
        )
    problems.add(field, payload_mb, allowed)


def _json_types() -> dict[str, tuple[type, ...]]:
    """The JSON types each :class:`ModelEntry` field takes (None where optional)."""
    kinds: dict[str, tuple[type, ...]] = {}
    for f in fields(ModelEntry):
        hint = str(f.type)
        accepted: tuple[type, ...] = (str,) if hint.startswith("str") else ()
        if hint.startswith("float"):
            accepted = (int, float)
        elif hint.startswith("int"):
            accepted = (int,)
        elif hint.startswith("bool"):
            accepted = (bool,)
        elif hint.startswith("dict"):
            accepted = (dict,)
        if "list[" in hint:
            accepted += (list,)
        kinds[f.name] = accepted + ((type(None),) if "None" in hint else ())
    return kinds


_JSON_TYPES = _json_types()


def _plain_values(data: Any) -> dict[str, Any] | None:
    """``data`` when it is a mapping of known fields with values of their JSON types (the
    common case, checked fast), else None: then :func:`dataclass_values` reports what is
    wrong."""
    if not isinstance(data, Mapping) or "name" not in data:
        return None
    for key, value in data.items():
        accepted = _JSON_TYPES.get(key)
        if accepted is None or not isinstance(value, accepted):
            return None
        if isinstance(value, bool) and bool not in accepted:
            return None
    return dict(data)


def _model(families: set[str], warnings: list[str], region: str | None):
    """The builder of one catalog item: a well-formed item (the common case) is built
    directly; any other mapping is built from its readable keys, its misspelled keys and
    wrongly typed values reported, and checked all the same (the catalog is then refused,
    with every problem of every item)."""

    def build(problems: Problems, where: str, data: Any) -> ModelEntry | None:
        path = where.rstrip(".")
        values = _plain_values(data)
        if values is not None:
            model = ModelEntry(**values)
            warnings.extend(_check_model(problems, path, model, families, region=region))
            return model
        if not isinstance(data, Mapping):
            dataclass_values(problems, where, data, ModelEntry)
            return None
        # weights are checked axis by axis below, as for a well-formed item
        rest = {k: v for k, v in data.items() if k != "weights"}
        values = dataclass_values(problems, where, rest, ModelEntry)
        bad = frozenset(k for k in rest if k in _JSON_TYPES and k not in values)
        model = ModelEntry(**{"name": None, **values, "weights": data.get("weights")})
        warnings.extend(_check_model(problems, path, model, families, bad, region))
        return model

    return build


def catalog_from_data(
    data: Any, families: set[str], base_dir: Path = Path("."), region: str | None = None
) -> Catalog:
    """A :class:`Catalog` from parsed YAML/JSON; ``families`` are the instance families a
    model may prefer; ``region`` (when known) the region explicit ECR images must be in.
    Raises one ``ValueError`` listing every problem."""
    problems = Problems("catalog")
    warnings: list[str] = []
    top = dataclass_values(problems, "", data if data is not None else {}, _CatalogFile)
    models = list_of(problems, "models", top.get("models", []), _model(families, warnings, region))
    name = top.get("name", "fleet")
    if isinstance(name, str) and shape_rule("EndpointName").problem(name) is not None:
        problems.add("name", name, "must be letters, digits and single hyphens")
    problems.check_unique("models[].name", (m.name for m in models))
    check_adapters(problems, models)
    check_group_sources(problems, models)
    _check_weights(problems, "weights", top.get("weights"))
    tenants = top.get("tenants") or {}
    tenant_weights = {}
    for tenant, settings in tenants.items():
        if not isinstance(settings, Mapping) or set(settings) - {"weights"}:
            problems.add(f"tenants.{tenant}", settings, "must be a mapping with one key: weights")
            continue
        _check_weights(problems, f"tenants.{tenant}.weights", settings.get("weights"))
        tenant_weights[tenant] = dict(settings.get("weights") or {})
    threshold = top.get("choice_warning_monthly", 500.0)
    if threshold < 0:
        problems.add("choice_warning_monthly", threshold, "must be >= 0 (USD a month)")
    problems.raise_if_any()
    return Catalog(
        name=name,
        models=models,
        weights=dict(top.get("weights") or {}),
        tenant_weights=tenant_weights,
        base_dir=base_dir,
        warnings=tuple(warnings),
        choice_warning_monthly=float(threshold),
        adapter_ranks=lora_ranks(models),
    )


#: PyYAML's safe loader, in C where PyYAML was built with libyaml (the same documents, parsed
#: several times faster).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_catalog(path: str | Path, families: set[str], region: str | None = None) -> Catalog:
    """Read and validate a catalog file (``.json`` as JSON, anything else as YAML)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ValueError(f"cannot read catalog {path}: {error.strerror}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.load(text, _YAML_LOADER)
    except (ValueError, yaml.YAMLError) as error:
        raise ValueError(
            f"catalog {path} is not valid {path.suffix[1:] or 'YAML'}: {error}"
        ) from None
    if not isinstance(data, Mapping):
        raise ValueError(f"catalog {path}: must be a mapping with a 'models' list")
    return catalog_from_data(data, families, path.parent, region)
