"""Sizing an image-generation (diffusion) pipeline: what one image computes at its steps
and resolution, the memory its activations take, and the catalog keys that set them.

Catalog keys (image-generation only): ``steps`` (denoising steps; by default the
pipeline's, from its model card: ``steps`` in ``data/architectures.json``), ``width`` and
``height`` (pixels; by default 1024 x 1024, the native size of SDXL, SD3 and FLUX),
multiples of 8 x the denoiser's patch size (the VAE downsamples 8x; a transformer takes
one token per 2 x 2 latents: the pipelines' own check). A default is named in the plan.

One image (pixels = width x height):

- denoiser, per pass: a transformer (SD3, FLUX) computes 2 x denoiser parameters x
  sequence + 4 x layers x sequence^2 x hidden (attention scores and values), sequence =
  image tokens (``image_tokens`` at 1024 x 1024, scaled by pixels) + ``text_tokens``; a
  UNet (SDXL), whose convolutions reuse weights across positions, its
  ``denoiser_tflop_per_pass`` scaled by pixels;
- passes = steps x guidance passes (2 with classifier-free guidance, 1 for a
  guidance-distilled model);
- text encoders once per prompt and guidance pass: 2 x their parameters x ``text_tokens``;
- VAE decode: 2.54 TFLOP per 512 x 512 image (NVIDIA's count for Stable Diffusion's VAE
  decoder, scaled by pixels; SDXL's VAE has its layout, SD3's and FLUX's the same blocks
  on 16 latent channels instead of 4: an approximation for them, a few percent of an
  image at most).

The request is compute-bound: time = FLOPs / (devices x 16-bit tensor rate x efficiency).
The efficiency is calibrated: the median, over the measured image rows of
``data/performance.json``, of the rate each row implies; for transformers over the
transformer rows (ONNX Runtime's H100 figures), for a UNet over the UNet rows (SDXL on
A100, H100 and Inferentia2: fal's and Stability AI's published per-image times and the
Neuron SDK's), whose per-pass figure is itself a calibration (architectures notes): the
median of what they imply, not the 40% it was derived at. A pipeline runs on one device:
it has no tensor parallelism (:mod:`fm_platform.fleet.deciding.options`).

Memory: the pipeline's parts (denoiser, text encoders, VAE) at the model's dtype, plus
activation headroom at the resolution: 2.5 GiB per 1024 x 1024 image (the VAE decode's
feature maps) + 138 bytes x passes per step x sequence x hidden (the denoiser's), fitted to
ONNX Runtime's measured peaks (FLUX.1-dev 36,651 MB, SD3.5 Large 31,517 MB at 1024 x 1024;
FLUX.1-schnell's 36,629 MB is then predicted within 0.3%), at least 0.5 GiB.
"""

from __future__ import annotations

import statistics
from functools import cache
from typing import Any, Protocol

from fm_platform.fleet.models.architectures import Architecture, architecture, known_architectures
from fm_platform.fleet.sizing.measured import performance_data
from fm_platform.fleet.sizing.request_work import RequestWork
from fm_platform.hardware.devices import device
from fm_platform.hardware.instances import instance_spec

IMAGE = "image-generation"
#: The native resolution of SDXL, SD3 and FLUX (their default sample size: 128 latents x 8).
DEFAULT_SIDE = 1024
REFERENCE_PIXELS = 1024 * 1024
#: SD-family VAEs downsample 8x (diffusers' vae_scale_factor).
VAE_SCALE = 8
#: NVIDIA, "Stable Diffusion inference acceleration" (TensorRT slides, mirrored at
#: https://www.sgpjbg.com/bgdown/155314.html): the VAE decoder computes 2.53933e12 FLOPs
#: for a 512 x 512 image.
VAE_DECODE_FLOPS_PER_PIXEL = 2.53933e12 / (512 * 512)
#: Activation headroom, fitted to ONNX Runtime's two measured peaks (module docstring).
PIXEL_HEADROOM_GIB, ACTIVATION_BYTES = 2.5, 138
MIN_HEADROOM_GIB = 0.5
#: The rate a UNet's denoiser_tflop_per_pass was derived at (architectures.json notes):
#: the efficiency without measured rows.
UNET_EFFICIENCY = 0.4
GIB = 1024**3


class _Recorder(Protocol):
    def add(self, field: str, value: object, allowed: str) -> None: ...


def image_architectures() -> tuple[str, ...]:
    """The built-in diffusion pipelines."""
    return tuple(n for n in known_architectures() if architecture(n).task == IMAGE)


def _hidden(arch: Architecture) -> int:
    return arch.hidden_size or arch.attention_heads * arch.head_dim


def _sequence(arch: Architecture, pixels: int) -> float:
    """Tokens one denoiser pass attends over: the image's and the prompt's."""
    image = (arch.image_tokens or 4096) * pixels / REFERENCE_PIXELS
    return image + (arch.text_tokens or 77)


def pass_flops(arch: Architecture, pixels: int) -> float:
    """FLOPs of one denoiser pass over an image of ``pixels`` (module docstring)."""
    if arch.denoiser_tflop_per_pass:
        return arch.denoiser_tflop_per_pass * 1e12 * pixels / REFERENCE_PIXELS
    seq = _sequence(arch, pixels)
    linear = 2 * (arch.denoiser_params_b or 0) * 1e9 * seq
    return linear + 4 * arch.layers * seq**2 * _hidden(arch)


def image_flops(arch: Architecture, steps: int, pixels: int) -> tuple[float, float, float]:
    """FLOPs of one image: the denoiser's passes, the text encoders', the VAE decode's."""
    denoiser = steps * arch.guidance_passes * pass_flops(arch, pixels)
    text = 2 * (arch.text_encoder_params_b or 0) * 1e9 * (arch.text_tokens or 77)
    return denoiser, text * arch.guidance_passes, VAE_DECODE_FLOPS_PER_PIXEL * pixels


def headroom_gib(arch: Architecture, pixels: int) -> float:
    """Activations of one image beside the weights (module docstring)."""
    denoiser = ACTIVATION_BYTES * arch.guidance_passes * _sequence(arch, pixels) * _hidden(arch)
    vae = PIXEL_HEADROOM_GIB * pixels / REFERENCE_PIXELS
    return max(MIN_HEADROOM_GIB, vae + denoiser / GIB)


@cache
def _image_rows() -> tuple[dict, ...]:
    return tuple(performance_data().get("image_records", ()))


def row_efficiency(row: dict) -> float:
    """The share of its devices' 16-bit rate a measured image row implies."""
    arch = architecture(row["model"])
    pixels = row.get("width", DEFAULT_SIDE) * row.get("height", DEFAULT_SIDE)
    flops = sum(image_flops(arch, row["steps"], pixels))
    dev = device(instance_spec(row["instance_type"]))
    assert dev is not None, row["instance_type"]
    peak = row["tensor_parallel"] * dev.tflops_for(row.get("dtype", "bf16")) * 1e12
    return flops / row["latency_s"] / peak


@cache
def calibration(unet: bool = False) -> tuple[float, str]:
    """The efficiency of transformer denoisers (median over the measured rows of models
    without a per-pass figure), or with ``unet`` of UNets (over the rows of models with
    one), and what it came from."""
    rows = [
        r for r in _image_rows() if bool(architecture(r["model"]).denoiser_tflop_per_pass) == unet
    ]
    if not rows:
        return UNET_EFFICIENCY, "no measured image rows: the estimator's default"
    rates = [row_efficiency(r) for r in rows]
    labels = ", ".join(
        f"{r['model']} {r['instance_type']} {r['steps']} steps {rate:.2f}"
        for r, rate in zip(rows, rates, strict=True)
    )
    median = statistics.median(rates)
    return median, f"the median of {len(rows)} measured rows of data/performance.json ({labels})"


def image_work(arch: Architecture, steps: int, width: int, height: int) -> RequestWork:
    """What one ``width`` x ``height`` image of ``steps`` computes, and its headroom."""
    pixels = width * height
    denoiser, text, vae = image_flops(arch, steps, pixels)
    if arch.denoiser_tflop_per_pass:
        efficiency, source = calibration(unet=True)
        per_pass = f"UNet {arch.denoiser_tflop_per_pass:g} TFLOP per pass at 1024x1024, by pixels"
    else:
        efficiency, source = calibration()
        per_pass = (
            f"2 x {arch.denoiser_params_b:g} B x {_sequence(arch, pixels):,.0f} tokens + attention"
        )
    detail = (
        f"one {width}x{height} image: {steps} steps x {arch.guidance_passes} guidance "
        f"passes x ({per_pass}) = {denoiser / 1e12:,.0f} TFLOP + text encoders "
        f"{text / 1e12:,.1f} + VAE decode {vae / 1e12:,.1f} TFLOP; efficiency "
        f"{efficiency:.2f}: {source}"
    )
    return RequestWork(
        flops=denoiser + text + vae,
        decode_bytes_per_token=0.0,
        headroom_gib=headroom_gib(arch, pixels),
        efficiency=efficiency,
        detail=detail,
    )


def check_image_keys(problems: _Recorder, path: str, m: Any, task: str | None) -> None:
    """``steps``, ``width`` and ``height`` belong to an image-generation model and are
    positive (sides a multiple of 8 x its denoiser's patch size); an image-generation model
    is sized from a built-in pipeline unless the catalog measured it."""
    given = [k for k in ("steps", "width", "height") if getattr(m, k) is not None]
    if task != IMAGE:
        for key in given:
            problems.add(
                f"{path}.{key}", getattr(m, key), f"applies to task {IMAGE} only (task: {task})"
            )
        return
    try:
        arch = architecture(m.architecture) if m.architecture is not None else None
    except KeyError:  # an unknown architecture, reported already
        return
    step = VAE_SCALE * (arch.patch_size if arch else 1)
    for key in given:
        value = getattr(m, key)
        if value <= 0:
            problems.add(f"{path}.{key}", value, "must be > 0")
        elif key != "steps" and value % step:
            problems.add(
                f"{path}.{key}", value, f"must be a multiple of {step} (the pipeline's latents)"
            )
    measured = m.rpm_per_copy is not None or m.benchmark_file is not None
    if (arch is None or not arch.denoiser_params_b) and not measured:
        problems.add(
            f"{path}.architecture",
            m.architecture,
            f"give a diffusion pipeline ({', '.join(image_architectures())}), or "
            f"rpm_per_copy or benchmark_file: task {IMAGE} is sized from its denoiser",
        )


def resolution(m: Any) -> tuple[int, int, bool]:
    """``width`` x ``height`` of ``m`` and whether a default stands in for either."""
    width, height = m.width or DEFAULT_SIDE, m.height or DEFAULT_SIDE
    return width, height, m.width is None or m.height is None


def default_steps(arch: Architecture) -> int:
    """The pipeline's own number of steps (its model card), 28 when it names none."""
    return arch.steps or 28
