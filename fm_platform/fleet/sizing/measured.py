"""The measured rows the planner ships (``fm_platform/fleet/data/performance.json``: text
generation ``records``, ``image_records``, ``encoder_records``, ``speech_records``, their
``sources`` and ``measured_as``), read once."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


@cache
def performance_data() -> dict:
    """The parsed ``data/performance.json`` (shared: do not modify)."""
    text = resources.files("fm_platform.fleet").joinpath("data/performance.json").read_text()
    return json.loads(text)
