"""On-demand hourly prices of SageMaker real-time hosting instances, per region.

``instance_prices.json`` (shipped here) holds, for every region its source covers, the
USD price per instance-hour of each hosting type that ``instance_specs.json`` describes,
the types without a price there (``unpriced``: not offered in that region, or not priced
by the source), and where the figures come from; :mod:`fm_platform.hardware.price_list`
regenerates it from the AWS Price List.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

DATA_FILE = "instance_prices.json"
#: The region whose prices are used when none is named.
DEFAULT_REGION = "us-east-1"


@cache
def _data() -> dict[str, Any]:
    return json.loads(resources.files("fm_platform.hardware").joinpath(DATA_FILE).read_text())


def price_regions() -> tuple[str, ...]:
    """The regions with prices, sorted."""
    return tuple(sorted(_data()["regions"]))


def hourly_prices(region: str = DEFAULT_REGION) -> dict[str, float]:
    """On-demand USD per instance-hour by ``ml.*`` hosting type in ``region``.

    Raises ``ValueError`` naming the regions that have prices when ``region`` has none.
    """
    regions = _data()["regions"]
    if region not in regions:
        raise ValueError(
            f"region {region!r} has no hosting prices in fm_platform/hardware/{DATA_FILE}; "
            "regions with prices: " + ", ".join(sorted(regions))
        )
    return dict(regions[region])


def unpriced_types(region: str = DEFAULT_REGION) -> tuple[str, ...]:
    """Hosting types with hardware figures but no price in ``region``."""
    return tuple(_data()["unpriced"].get(region, ()))


def price_source() -> dict[str, Any]:
    """Where the shipped prices come from (source, date, how to regenerate)."""
    return dict(_data()["source"])
