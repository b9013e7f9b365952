"""Model architectures the planner knows by name (``data/architectures.json``, each record
citing the model's ``config.json``): parameters, layers, attention and KV heads, head
dimension, context length and task."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Architecture:
    """One model's figures; ``active_params_b`` is what one token passes through (the
    parameters for a dense model, fewer for a mixture of experts)."""

    name: str
    params_b: float
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    max_context: int
    task: str
    source: str
    active_params_b: float

    @property
    def kv_bytes_per_token_per_byte(self) -> int:
        """Layers x KV heads x head dimension x 2 (K and V): KV cache bytes per token for
        one byte per value."""
        return self.layers * self.kv_heads * self.head_dim * 2


@cache
def _records() -> dict[str, dict]:
    text = resources.files("fm_platform.fleet").joinpath("data/architectures.json").read_text()
    return json.loads(text)["architectures"]


def known_architectures() -> tuple[str, ...]:
    """The names a catalog's ``architecture`` field accepts."""
    return tuple(sorted(_records()))


@cache
def architecture(name: str) -> Architecture:
    """The figures of a known architecture (``KeyError`` for others)."""
    record = dict(_records()[name])
    record.setdefault("active_params_b", record["params_b"])
    return Architecture(name=name, **record)
