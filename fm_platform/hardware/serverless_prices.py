"""On-demand prices of SageMaker Serverless Inference, per region.

``serverless_prices.json`` (shipped here) holds, per region with a cited figure, the USD
price per second of compute of each memory size (billed for each invocation's duration)
and per GB of data processed (request bodies in, responses out), with its source and date.
Only US East (N. Virginia) figures are cited; other regions have none, and the planner
offers no serverless endpoint there. Provisioned concurrency is priced separately by AWS
and not shipped (the planner plans on-demand serverless endpoints only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

DATA_FILE = "serverless_prices.json"
BYTES_PER_GB = 1024**3


@dataclass(frozen=True)
class ServerlessPrices:
    """One region's prices: USD per second by memory size (MiB) and USD per GB processed."""

    usd_per_second: dict[int, float]
    usd_per_gb_processed: float

    def request_usd(self, memory_mib: int, seconds: float, processed_bytes: float) -> float:
        """One invocation's cost: ``seconds`` of compute at ``memory_mib`` plus
        ``processed_bytes`` of data in and out."""
        compute = self.usd_per_second[memory_mib] * seconds
        return compute + processed_bytes / BYTES_PER_GB * self.usd_per_gb_processed


@cache
def _data() -> dict[str, Any]:
    return json.loads(resources.files("fm_platform.hardware").joinpath(DATA_FILE).read_text())


def serverless_regions() -> tuple[str, ...]:
    """The regions with Serverless Inference prices, sorted."""
    return tuple(sorted(_data()["regions"]))


def serverless_prices(region: str) -> ServerlessPrices | None:
    """``region``'s Serverless Inference prices; None where none is cited."""
    record = _data()["regions"].get(region)
    if record is None:
        return None
    return ServerlessPrices(
        {int(size): float(usd) for size, usd in record["usd_per_second"].items()},
        float(record["usd_per_gb_processed"]),
    )


def serverless_price_source() -> dict[str, Any]:
    """Where the shipped serverless prices come from (page, figures, date)."""
    return dict(_data()["source"])
