"""Sizing a speech-to-text (Whisper-style encoder-decoder) model: what one request of
``audio_seconds`` computes and reads, and the memory beside its weights.

Catalog key (speech-to-text only): ``audio_seconds``, the audio of one request (by default
30 s, one window: named in the plan).

Whisper reads audio in 30-second windows of 1,500 encoder positions (Radford et al.,
"Robust Speech Recognition via Large-Scale Weak Supervision", 2022, section 2.2; the
architecture's ``audio_frames``); a longer recording is transcribed window by window. One
request:

- encoder, per window: 2 x encoder parameters x frames + 4 x encoder layers x frames^2 x
  hidden (attention); encoder parameters = parameters x encoder layers / all layers (half
  each without an architecture: a default named in the plan);
- decoder: ``output_tokens``, by default 3.3 per second of audio: about 150 spoken words a
  minute (the National Center for Voice and Speech's average for conversational English)
  in GPT-2's byte-level BPE, which Whisper uses (the paper's section 2.3) at about 0.75
  words per token (OpenAI, "What are tokens and how to count them?"). A decoded token
  reads the decoder's weights and its window's cross-attention keys and values (decoder
  layers x 2 x frames x hidden x bytes): memory-bound at one request, as for text
  generation.

Memory beside the weights: 0.5 GiB + the encoder's activations of one window (frames x
hidden x 32 bytes) + the cross-attention cache of one window + the self-attention cache of
its longest transcript (``max_context`` tokens, 448 for Whisper).

Calibration: the measured speech rows of ``data/performance.json`` (:func:`speech_rows`:
Whisper large-v3 on an A10G in fp32 and on Inferentia2 in bf16, served on SageMaker
endpoints; large-v3-turbo on a T4 in fp16 in the transformers pipeline) run at 0.49, 0.13
and 0.50 of the uncalibrated estimate's rate. The estimate of a speech request is scaled by
their median ratio of measured to estimated requests per minute, 0.49
(:func:`fm_platform.fleet.sizing.performance.speech_calibration`), as the diffusion rows set
the efficiency of an image.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any, Protocol

from fm_platform.fleet.models.architectures import Architecture
from fm_platform.fleet.sizing.measured import performance_data
from fm_platform.fleet.sizing.request_work import RequestWork

SPEECH = "speech-to-text"
#: Whisper's input window (s) and its encoder positions.
WINDOW_S, WINDOW_FRAMES = 30.0, 1500
DEFAULT_AUDIO_S = 30.0
#: Decoded tokens per second of speech (module docstring).
TOKENS_PER_AUDIO_SECOND = 3.3
#: Activation bytes per encoder position per hidden unit, and the fixed headroom (GiB).
ACTIVATION_BYTES_PER_HIDDEN, BASE_HEADROOM_GIB = 32, 0.5
#: Whisper's max_target_positions: the longest transcript of one window.
MAX_WINDOW_TOKENS = 448
GIB = 1024**3


class _Recorder(Protocol):
    def add(self, field: str, value: object, allowed: str) -> None: ...


@cache
def speech_rows() -> tuple[dict, ...]:
    """The measured speech rows of ``data/performance.json``."""
    return tuple(performance_data()["speech_records"])


def windows(audio_seconds: float) -> int:
    """30-second windows of ``audio_seconds`` of audio."""
    return max(1, math.ceil(audio_seconds / WINDOW_S))


def default_output_tokens(audio_seconds: float) -> int:
    """The transcript of ``audio_seconds`` of speech, in tokens."""
    return math.ceil(round(audio_seconds * TOKENS_PER_AUDIO_SECOND, 6))


def speech_work(
    arch: Architecture | None,
    params_b: float,
    hidden: int,
    layers: int | None,
    audio_seconds: float,
    output_tokens: int,
    weight_bytes: float,
    value_bytes: float,
) -> RequestWork:
    """What one request of ``audio_seconds`` computes, reads per decoded token (weights at
    ``weight_bytes`` a parameter, caches at ``value_bytes`` a value) and needs beside its
    weights (module docstring)."""
    encoder_layers = arch.layers if arch else layers or 32
    decoder_layers = (arch.decoder_layers if arch else None) or encoder_layers
    frames = (arch.audio_frames if arch else None) or WINDOW_FRAMES
    share = decoder_layers / (encoder_layers + decoder_layers)
    count = windows(audio_seconds)
    per_window = 2 * params_b * (1 - share) * 1e9 * frames
    per_window += 4 * encoder_layers * frames**2 * hidden
    cross_kv = decoder_layers * 2 * frames * hidden * value_bytes
    decoder = params_b * share * 1e9 * weight_bytes
    self_kv = (arch.max_context if arch else MAX_WINDOW_TOKENS) * decoder_layers * 2 * hidden
    activations = frames * hidden * ACTIVATION_BYTES_PER_HIDDEN
    headroom = BASE_HEADROOM_GIB + (activations + cross_kv + self_kv * value_bytes) / GIB
    detail = (
        f"{audio_seconds:g} s of audio: {count} window(s) of {WINDOW_S:g} s, encoder "
        f"{per_window / 1e12:,.2f} TFLOP each (2 x {params_b * (1 - share):.2f} B x {frames} "
        f"frames + attention); {output_tokens} tokens decoded, each reading the decoder's "
        f"{decoder / GIB:.2f} GiB + {cross_kv / GIB:.2f} GiB of cross-attention cache"
    )
    return RequestWork(
        flops=count * per_window,
        decode_bytes_per_token=decoder + cross_kv,
        headroom_gib=headroom,
        efficiency=None,
        detail=detail,
    )


def check_speech_keys(problems: _Recorder, path: str, m: Any, task: str | None) -> None:
    """``audio_seconds`` belongs to a speech-to-text model and is positive."""
    if m.audio_seconds is None:
        return
    if task != SPEECH:
        problems.add(
            f"{path}.audio_seconds",
            m.audio_seconds,
            f"applies to task {SPEECH} only (task: {task})",
        )
    elif m.audio_seconds <= 0:
        problems.add(f"{path}.audio_seconds", m.audio_seconds, "must be > 0 (seconds of audio)")
