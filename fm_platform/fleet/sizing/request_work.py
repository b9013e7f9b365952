"""What one request of a model that does not decode in batches computes (the sizing of
diffusion pipelines, speech models and encoders shares this shape)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RequestWork:
    """One request: ``flops`` computed, ``decode_bytes_per_token`` read per decoded token
    (speech), ``headroom_gib`` of activations beside the weights,
    ``efficiency`` the share of the devices' peak it runs at (None: the estimator's
    default) and ``detail``: what the figures came from, for the plan."""

    flops: float
    decode_bytes_per_token: float
    headroom_gib: float
    efficiency: float | None
    detail: str
