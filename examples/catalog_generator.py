"""Realistic model catalogs of any size, for the example catalog and the benchmark.

Each model names a built-in architecture (parameters, layers, heads: their config.json).
``python examples/catalog_generator.py 220 --team > examples/catalog.yaml`` rebuilds the
example: the same models as a platform team would write them (:func:`team_catalog`).
"""

from __future__ import annotations

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
    "call-transcriber": {"task": "speech-to-text", "rpm_per_copy": 2, "output_tokens": 0},
}
#: Models a team adds beside the generated ones: a realtime reranker (TEI), an intent
#: classifier on CPU, an image-generation model (SDXL: 2.6 B UNet + 0.8 B text encoders,
#: about 10 s per 1024x1024 image at 30 steps on one A10G, so 6 a minute per copy) and a
#: classifier in the team's own image.
TEAM_MODELS: list[dict[str, Any]] = [
    {"name": "search-reranker", "params_b": 0.56, "task": "reranking", "peak_rpm": 600},
    {
        "name": "support-intent-cpu",
        "architecture": "deberta-v3-base",
        "instance_family": "c6i",
        "peak_rpm": 120,
    },
    {
        "name": "marketing-sdxl",
        "params_b": 3.5,
        "task": "image-generation",
        "dtype": "fp16",
        "memory_gib": 12,
        "rpm_per_copy": 6,
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
        entry.pop("payload_mb")  # a speech request: audio of a few minutes
        entry["latency_class"] = "relaxed"
        entry["latency_p50_ms"] = 30000
    tenant = entry.get("tenant")
    suffix = entry["name"].removeprefix(f"{tenant}-") if tenant else ""
    if suffix in ADAPTER_BASES:
        entry = {
            "name": entry["name"],
            "base_model": ADAPTER_BASES[suffix],
            "adapter": f"{TEAM_BUCKET}/adapters/{tenant}/{suffix}/",
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


if __name__ == "__main__":
    build = team_catalog if "--team" in sys.argv[2:] else catalog_data
    print("# Generated by examples/catalog_generator.py; architectures are built in.")
    sys.stdout.write(yaml.safe_dump(build(int(sys.argv[1])), sort_keys=False))
