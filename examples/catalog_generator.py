"""Model catalogs of any size, for the example catalog and the benchmark.

Each model names a built-in architecture (parameters, layers, heads: their config.json).
``python examples/catalog_generator.py 220 --team > examples/catalog.yaml`` rebuilds the
example: the same models as a platform team would write them (:func:`team_catalog`);
``python examples/catalog_generator.py 300 --realistic`` prints a catalog with the
variety of a real one (:func:`realistic_catalog_data`).
"""

from __future__ import annotations

import random
import sys
from typing import Any

import yaml

# Shared platform models: (name, architecture, extra fields). Architectures are built in
# (fm_platform/fleet/data/architectures.json); traffic figures are the example's.
SHARED = [
    ("llama-3-1-8b-instruct", "llama-3.1-8b", {"peak_rpm": 600, "latency_p50_ms": 12000}),
    ("llama-3-1-70b-instruct", "llama-3.1-70b", {"peak_rpm": 120, "latency_p50_ms": 20000}),
    ("llama-2-13b-chat", "llama-2-13b", {"peak_rpm": 120}),
    ("llama-2-7b-chat", "llama-2-7b", {"peak_rpm": 300}),
    ("mistral-7b-instruct-v0-3", "mistral-7b-v0.3", {"peak_rpm": 300}),
    ("mixtral-8x7b-instruct", "mixtral-8x7b", {"peak_rpm": 120, "active_hours": 3}),
    ("falcon-40b-instruct", "falcon-40b", {"peak_rpm": 30, "active_hours": 8}),
    ("gemma-2-9b-it", "gemma-2-9b", {"peak_rpm": 60}),
    ("gemma-2-27b-it", "gemma-2-27b", {"peak_rpm": 60}),
    ("qwen2-5-14b-instruct", "qwen2.5-14b", {"peak_rpm": 60}),
    ("qwen2-5-32b-instruct", "qwen2.5-32b", {"peak_rpm": 60, "active_hours": 10}),
    ("qwen2-5-72b-instruct", "qwen2.5-72b", {"peak_rpm": 60, "active_hours": 12}),
    ("qwen3-32b", "qwen3-32b", {"peak_rpm": 240}),
    ("phi-3-mini-4k-instruct", "phi-3-mini-4k", {"peak_rpm": 240}),
    ("phi-3-medium-4k-instruct", "phi-3-medium-4k", {"peak_rpm": 60}),
    ("codellama-34b-instruct", "codellama-34b", {"peak_rpm": 60, "active_hours": 10}),
    ("starcoder2-15b", "starcoder2-15b", {"peak_rpm": 60, "active_hours": 10}),
    ("mistral-nemo-instruct", "mistral-nemo-12b", {"peak_rpm": 60}),
]
# Models that need their own endpoint, or whose objective may call for one.
DEDICATED = [
    (
        "summarizer-regulated",
        "llama-3.1-8b",
        {
            "peak_rpm": 60,
            "isolation": "dedicated",
            "isolation_reason": "regulated customer data (PII)",
        },
    ),
    (
        "clinical-notes-llama-70b",
        "llama-3.1-70b",
        {
            "peak_rpm": 30,
            "isolation": "dedicated",
            "isolation_reason": "health data, separate blast radius",
        },
    ),
    (
        "search-embedder-realtime",
        "bge-large-en-v1.5",
        {"framework": "pytorch", "peak_rpm": 1000, "latency_p50_ms": 80},
    ),
    (
        "fraud-classifier",
        "deberta-v3-base",
        {"framework": "pytorch", "peak_rpm": 3000, "latency_class": "strict"},
    ),
]
# Batch work: callers do not wait for the answer (latency_class: batch).
BATCH = [
    (
        "nightly-doc-summarizer",
        "llama-3.1-8b",
        {
            "latency_class": "batch",
            "peak_rpm": 240,
            "active_hours": 4,
            "prompt_tokens": 6000,
            "output_tokens": 512,
        },
    ),
    (
        "embedding-backfill",
        "bge-large-en-v1.5",
        {"framework": "pytorch", "latency_class": "batch", "peak_rpm": 6000, "active_hours": 3},
    ),
    # Around the clock: the fitness functions may prefer a shared real-time endpoint.
    (
        "catalog-enricher",
        "llama-3.1-8b",
        {"latency_class": "batch", "peak_rpm": 600, "active_hours": 24},
    ),
]
# An audio model of Whisper-large-v3's size (1.55 B parameters, no built-in architecture):
# hour-long recordings, request bodies up to 50 MB, transcripts of about 2,000 tokens.
TRANSCRIBER = {
    "name": "call-transcriber",
    "params_b": 1.55,
    "task": "text-generation",
    "latency_class": "batch",
    "payload_mb": 50,
    "output_tokens": 2000,
    "peak_rpm": 20,
    "active_hours": 6,
}
# Per tenant: chatbot fine-tunes (scheduled) and small encoder models.
PER_TENANT = [
    ("llama-3-1-8b-ft", "llama-3.1-8b", {"peak_rpm": 60, "active_hours": 9}),
    ("mistral-7b-ft", "mistral-7b-v0.3", {"peak_rpm": 30, "active_hours": 3}),
    (
        "llama-3-2-3b-ft",
        "llama-3.2-3b",
        {"peak_rpm": 30, "active_hours": 3, "cold_start_tolerant": True},
    ),
    (
        "distilbert-sentiment",
        "distilbert-sst2",
        {"framework": "pytorch", "peak_rpm": 30, "cold_start_tolerant": True},
    ),
    (
        "minilm-l6-embedder",
        "all-minilm-l6-v2",
        {"framework": "pytorch", "peak_rpm": 60, "cold_start_tolerant": True},
    ),
    (
        "deberta-v3-intent",
        "deberta-v3-base",
        {"framework": "pytorch", "peak_rpm": 30, "cold_start_tolerant": True},
    ),
    (
        "bge-large-embedder",
        "bge-large-en-v1.5",
        {"framework": "pytorch", "peak_rpm": 30, "cold_start_tolerant": True},
    ),
]
TENANTS = [
    "acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne", "wonka", "tyrell",
    "cyberdyne", "soylent", "aperture", "blackmesa", "massive", "oscorp", "gringotts",
    "monarch", "vandelay", "pied", "dunder", "sterling", "prestige", "nakatomi", "virtucon",
    "zorg", "gekko", "bluth", "krusty", "duff", "lacroix",
]  # fmt: skip


def _entry(name: str, arch: str, extra: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"name": name, "architecture": arch, **extra, **more}


def catalog_data(count: int, name: str = "fleet") -> dict[str, Any]:
    """A catalog of exactly ``count`` models: the shared, dedicated and batch ones first,
    then per-tenant models (tenants numbered past the named ones)."""
    models = [_entry(n, p, e) for n, p, e in SHARED + DEDICATED + BATCH] + [TRANSCRIBER]
    tenant = 0
    while len(models) < count:
        label = TENANTS[tenant % len(TENANTS)] + ("" if tenant < len(TENANTS) else str(tenant))
        for base, arch, extra in PER_TENANT:
            models.append(_entry(f"{label}-{base}", arch, extra, tenant=label))
        tenant += 1
    return {"name": name, "models": models[:count]}


# Where a team keeps its weights, and the key that encrypts them (example account).
TEAM_BUCKET = "s3://example-team-models"
TEAM_KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
HF_TOKEN_SECRET = "arn:aws:secretsmanager:us-east-1:111122223333:secret:hf-gated-token-AbCdEf"
#: Tenant fine-tunes that are LoRA adapters of a shared base (tenant model -> base).
ADAPTER_BASES = {
    "llama-3-1-8b-ft": "llama-3-1-8b-instruct",
    "mistral-7b-ft": "mistral-7b-instruct-v0-3",
}
#: Per model name: keys a team adds (weights, containers, tasks).
TEAM_KEYS: dict[str, dict[str, Any]] = {
    "llama-3-1-70b-instruct": {
        "hub": "meta-llama/Llama-3.1-70B-Instruct",
        "revision": "1605565b47bb9346c5515c34102e054115b4f98b",
        "hub_token_secret": HF_TOKEN_SECRET,
    },
    "llama-2-7b-chat": {"container": "tgi"},
    "clinical-notes-llama-70b": {
        "weights_uri": f"{TEAM_BUCKET}/clinical/llama-3-1-70b-notes/",
        "weights_kms_key_arn": TEAM_KEY,
    },
    "call-transcriber": {
        "task": "speech-to-text",
        "architecture": "whisper-large-v3",
        "audio_seconds": 120,
    },
}
#: Models a team adds beside the generated ones: a realtime reranker (TEI), an intent
#: classifier on CPU, an image-generation model (SDXL at 30 steps and 1024x1024, sized
#: from its pipeline) and a classifier in the team's own image.
TEAM_MODELS: list[dict[str, Any]] = [
    {
        "name": "search-reranker",
        "params_b": 0.56,
        "task": "reranking",
        "peak_rpm": 600,
        "inputs_per_request": 20,
    },
    {
        "name": "support-intent-cpu",
        "architecture": "deberta-v3-base",
        "instance_family": "c6i",
        "peak_rpm": 120,
    },
    {
        "name": "marketing-sdxl",
        "architecture": "sdxl-base-1.0",
        "dtype": "fp16",
        "steps": 30,
        "width": 1024,
        "height": 1024,
        "peak_rpm": 12,
        "active_hours": 10,
        "latency_p50_ms": 15000,
    },
    {
        "name": "toxicity-filter",
        "params_b": 0.3,
        "task": "classification",
        "image": "111122223333.dkr.ecr.us-east-1.amazonaws.com/trust-safety/toxicity:2.3.0",
        "environment": {"MODEL_THRESHOLD": "0.8"},
        "rpm_per_copy": 600,
        "peak_rpm": 600,
    },
]


def _team_entry(model: dict[str, Any]) -> dict[str, Any]:
    entry = {**model, **TEAM_KEYS.get(model["name"], {})}
    if entry["name"] == "search-embedder-realtime":
        entry.pop("framework")  # on TEI, the embedding task's container
    if entry["name"] == "call-transcriber":
        for key in ("payload_mb", "params_b", "output_tokens"):  # sized from Whisper's
            entry.pop(key)  # architecture and two minutes of audio per request
        entry["latency_class"] = "relaxed"
        entry["latency_p50_ms"] = 30000
    tenant = entry.get("tenant")
    suffix = entry["name"].removeprefix(f"{tenant}-") if tenant else ""
    if suffix in ADAPTER_BASES:
        entry = {
            "name": entry["name"],
            "base_model": ADAPTER_BASES[suffix],
            "adapter": f"{TEAM_BUCKET}/adapters/{tenant}/{suffix}/adapter.tar.gz",
            "weights_kms_key_arn": TEAM_KEY,
            "peak_rpm": entry["peak_rpm"],
            "active_hours": entry["active_hours"],
            "tenant": tenant,
        }
    return entry


def team_catalog(count: int, name: str = "fleet") -> dict[str, Any]:
    """:func:`catalog_data` as a platform team writes it: tenant fine-tunes of the shared
    bases as LoRA adapters, weights in the team's bucket or on the hub (one gated), the
    embedder on TEI, a speech model, and :data:`TEAM_MODELS` (``count`` models in all)."""
    data = catalog_data(count - len(TEAM_MODELS), name)
    data["models"] = [_team_entry(m) for m in data["models"]] + TEAM_MODELS
    return data


# Realistic catalogs: what a platform team's catalog holds, by share of models.
# (architecture, share) per task; text generation dominates, then embeddings and rerankers.
REALISTIC_FAMILIES = {
    "text-generation": [
        ("llama-3.1-8b", 12), ("llama-3.2-1b", 3), ("llama-3.2-3b", 6), ("llama-3.3-70b", 3),
        ("qwen2.5-0.5b", 2), ("qwen2.5-1.5b", 3), ("qwen2.5-3b", 3), ("qwen2.5-7b", 8),
        ("qwen2.5-14b", 3), ("qwen2.5-32b", 2), ("qwen2.5-72b", 1), ("qwen3-4b", 3),
        ("qwen3-8b", 6), ("qwen3-14b", 2), ("qwen3-32b", 2), ("qwen3-30b-a3b", 2),
        ("mistral-7b-v0.3", 6), ("mistral-nemo-12b", 2), ("mistral-small-24b", 2),
        ("mixtral-8x7b", 1), ("gemma-2-2b", 2), ("gemma-2-9b", 2), ("gemma-3-4b", 2),
        ("gemma-3-12b", 2), ("gemma-3-27b", 1), ("phi-3.5-mini", 3), ("phi-4", 2),
        ("phi-4-mini", 2), ("deepseek-r1-distill-llama-8b", 2),
        ("deepseek-r1-distill-qwen-7b", 2), ("deepseek-r1-distill-qwen-32b", 1),
        ("falcon3-7b", 1),
    ],
    "embedding": [
        ("bge-small-en-v1.5", 3), ("bge-base-en-v1.5", 3), ("bge-large-en-v1.5", 3),
        ("bge-m3", 3), ("e5-large-v2", 2), ("multilingual-e5-large", 2), ("gte-large", 1),
        ("gte-base-en-v1.5", 1), ("all-minilm-l6-v2", 3),
    ],
    "reranking": [("bge-reranker-v2-m3", 3), ("bge-reranker-large", 1)],
    "classification": [
        ("distilbert-sst2", 3), ("bert-base-uncased", 3), ("roberta-base", 2),
        ("deberta-v3-base", 2),
    ],
    "speech-to-text": [("whisper-large-v3", 2), ("whisper-large-v3-turbo", 2)],
    "image-generation": [("sdxl-base-1.0", 2), ("flux.1-schnell", 1), ("sd3-medium", 1)],
}  # fmt: skip
REALISTIC_TASK_SHARE = {
    "text-generation": 60, "embedding": 18, "reranking": 5, "classification": 10,
    "speech-to-text": 3, "image-generation": 4,
}  # fmt: skip
#: Traffic teams write into a catalog: round figures (requests per minute at peak).
PEAK_RPM = (5, 10, 20, 30, 60, 120, 300, 600, 1200)
ACTIVE_HOURS = (2, 4, 6, 8, 10, 12, 16, 24, 24, 24)
LATENCY = (("strict", 2), ("standard", 6), ("relaxed", 2), ("batch", 1))
#: (prompt, output) tokens of generative workloads: chat, RAG, summarization, code.
REQUEST_SHAPES = ((None, None), (512, 256), (2000, 300), (6000, 500), (1500, 800))


def _pick(rng: random.Random, weighted: list[tuple[Any, int]] | tuple) -> Any:
    values, weights = zip(*weighted, strict=True)
    return rng.choices(values, weights)[0]


def realistic_catalog_data(count: int, name: str = "fleet", seed: int = 7) -> dict[str, Any]:
    """A catalog of ``count`` models with the variety of a real one: hundreds of tenants
    (one per ten models), every task, all latency classes, request shapes, dtypes, cold
    start tolerance, and one model in a hundred ``isolation: dedicated``; deterministic
    for a ``seed``."""
    rng = random.Random(seed)
    tasks = list(REALISTIC_TASK_SHARE.items())
    tenants = max(1, count // 10)
    models = []
    for i in range(count):
        task = _pick(rng, tasks)
        arch = _pick(rng, REALISTIC_FAMILIES[task])
        entry: dict[str, Any] = {
            "name": f"m{i:05d}-{arch.replace('.', '-')}",
            "architecture": arch,
            "tenant": f"team-{rng.randrange(tenants):04d}",
            "peak_rpm": rng.choice(PEAK_RPM),
            "active_hours": rng.choice(ACTIVE_HOURS),
            "latency_class": _pick(rng, LATENCY),
        }
        if task == "text-generation":
            prompt, output = rng.choice(REQUEST_SHAPES)
            if prompt is not None:
                entry.update(prompt_tokens=prompt, output_tokens=output)
            if rng.random() < 0.1:
                entry["dtype"] = rng.choice(("fp8", "int8", "int4"))
        else:
            entry["framework"] = "pytorch"
            if task in ("classification", "embedding") and rng.random() < 0.3:
                entry["dtype"] = "fp32"
        if rng.random() < 0.3:
            entry["cold_start_tolerant"] = rng.random() < 0.7
        if rng.random() < 0.01:
            entry.update(isolation="dedicated", isolation_reason="customer contract")
        models.append(entry)
    return {"name": name, "models": models}


if __name__ == "__main__":
    size = int(sys.argv[1])
    if "--realistic" in sys.argv:
        print("# Generated by examples/catalog_generator.py --realistic.")
        sys.stdout.write(yaml.safe_dump(realistic_catalog_data(size), sort_keys=False))
    else:
        build = team_catalog if "--team" in sys.argv[2:] else catalog_data
        print("# Generated by examples/catalog_generator.py; architectures are built in.")
        sys.stdout.write(yaml.safe_dump(build(size), sort_keys=False))
