"""Model architectures the planner knows by name (``data/architectures.json``, each record
citing the model's ``config.json``, or a diffusion pipeline's ``model_index.json``):
parameters, layers, attention and KV heads, head dimension, hidden size, vocabulary,
context length and task; experts of a mixture of experts; sliding-window layers; the
encoder frames of a speech model; the denoiser, steps and image tokens of a diffusion
pipeline."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class Architecture:
    """One model's figures; ``active_params_b`` is what one token passes through (the
    parameters for a dense model, fewer for a mixture of experts). ``sliding_window_layers``
    of ``layers`` keep at most ``sliding_window`` tokens of KV cache per sequence.
    Diffusion pipelines: ``denoiser_params_b`` run ``steps`` x ``guidance_passes`` times
    per image over ``image_tokens`` at 1024x1024 (or ``denoiser_tflop_per_pass`` for a UNet)
    and ``text_tokens`` of the prompt, in latents of ``patch_size`` x ``patch_size``; beside
    it ``text_encoder_params_b`` run once per prompt and ``vae_params_b`` decode. Speech:
    ``audio_frames`` encoder positions per 30 s window, ``decoder_layers``."""

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
    hidden_size: int | None = None
    vocab_size: int | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    decoder_layers: int | None = None
    audio_frames: int | None = None
    denoiser_params_b: float | None = None
    denoiser_tflop_per_pass: float | None = None
    image_tokens: int | None = None
    steps: int | None = None
    guidance_passes: int = 1
    text_encoder_params_b: float | None = None
    vae_params_b: float | None = None
    text_tokens: int | None = None
    patch_size: int = 1
    component_sizes: str | None = None

    @property
    def kv_bytes_per_token_per_byte(self) -> int:
        """Layers x KV heads x head dimension x 2 (K and V): KV cache bytes per token for
        one byte per value, every layer counted."""
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


def architectures_table() -> str:
    """Every shipped architecture as a Markdown table, by task then name: its task,
    parameters (active ones of a mixture of experts), context and source (the table of
    docs/architectures.md; ``python -m fm_platform.fleet.models.architectures`` prints it)."""
    rows = [
        "| architecture | task | parameters (B) | context | source |",
        "| --- | --- | --- | --- | --- |",
    ]
    for a in sorted(map(architecture, known_architectures()), key=lambda a: (a.task, a.name)):
        active = f" ({a.active_params_b:g} active)" if a.active_params_b != a.params_b else ""
        rows.append(
            f"| `{a.name}` | {a.task} | {a.params_b:g}{active} | {a.max_context:,} | {a.source} |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(architectures_table(), end="")
