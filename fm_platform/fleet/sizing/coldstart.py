"""How long a model that may scale to zero takes to serve its first request again: the
instance launch (only where its endpoint can reach zero instances), the container image
pull, the weights download and their load onto the devices.

These are estimates, shown as such in the plan (``cold_start_s`` and its detail), so a
team can judge a scale-to-zero choice before it meets a caller:

- instance launch: 300 s for SageMaker to provision and health-check a new ML instance
  (an Inference Components endpoint at zero instances, an asynchronous endpoint with an
  empty queue);
- image pull: 120 s for a large-model container (LMI, TGI: 10-20 GB images), 45 s for
  others;
- weights download: the weights at 250 MB/s from S3 (SageMaker's model download to the
  instance's volume);
- load and warm-up: the weights onto the devices at 2 GB/s, plus 30 s of engine warm-up
  for a generative model (memory profiling and CUDA graph capture) or 5 s for others;
- a cached start (an inference component caching its data, ``DataCacheConfig``, on an
  instance that already ran it: :mod:`fm_platform.rules.caching`) skips the image pull
  and the weights download: 0 s for both is an estimate (SageMaker publishes no figure).
"""

from __future__ import annotations

from functools import cache

from fm_platform.fleet.sizing.needs import Needs

INSTANCE_LAUNCH_S = 300.0
LARGE_IMAGE_PULL_S, IMAGE_PULL_S = 120.0, 45.0
LARGE_IMAGE_FRAMEWORKS = frozenset({"lmi", "tgi", "vllm"})
DOWNLOAD_GBPS, LOAD_GBPS = 0.25, 2.0
GENERATIVE_WARMUP_S, WARMUP_S = 30.0, 5.0


def cold_start(needs: Needs, launches_instance: bool, *, cached: bool = False) -> tuple[float, str]:
    """Expected seconds to the first answer after scaling from zero, and its parts;
    ``cached``: the image and weights are in the instance's data cache."""
    return _cold_start(
        needs.memory_gib or needs.weights_gib,
        needs.framework in LARGE_IMAGE_FRAMEWORKS,
        needs.generative,
        launches_instance,
        cached,
    )


@cache  # models alike start alike: one per weights size and framework of a fleet
def _cold_start(
    weights_gib: float, large: bool, generative: bool, launches_instance: bool, cached: bool
) -> tuple[float, str]:
    weights_gb = weights_gib * 1.073741824
    parts = []
    if launches_instance:
        parts.append(("instance launch", INSTANCE_LAUNCH_S))
    if cached:
        parts.append(("cached image and weights", 0.0))
    else:
        parts.append(("image pull", LARGE_IMAGE_PULL_S if large else IMAGE_PULL_S))
        parts.append(("weights download", weights_gb / DOWNLOAD_GBPS))
    warmup = GENERATIVE_WARMUP_S if generative else WARMUP_S
    parts.append(("load", weights_gb / LOAD_GBPS + warmup))
    total = sum(s for _, s in parts)
    detail = " + ".join(f"{what} {s:,.0f} s" for what, s in parts)
    return total, detail
