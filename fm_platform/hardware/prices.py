"""On-demand hourly prices of SageMaker hosting instances.

``instance_prices.json`` (shipped here) records the prices, their source, region and date.
Regenerate it from the AWS Price List API (``pricing:GetProducts``, service
``AmazonSageMaker``, ``component`` = ``Hosting``)::

    python -m fm_platform.hardware.prices --region us-east-1 [--add ml.g6e.12xlarge ...]

The Price List API answers from us-east-1 (and a few other regions) whatever region the
prices are for.
"""

from __future__ import annotations

import argparse
import datetime
import json
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

DATA_FILE = "instance_prices.json"
SERVICE_CODE = "AmazonSageMaker"
SOURCE_ID = "aws-price-list-get-products"


@cache
def _data() -> dict[str, Any]:
    return json.loads(resources.files("fm_platform.hardware").joinpath(DATA_FILE).read_text())


def hourly_prices() -> dict[str, float]:
    """On-demand USD per instance-hour by ``ml.*`` type, for the data file's region."""
    return dict(_data()["prices"])


def price_region() -> str:
    """The region the shipped prices are for."""
    return _data()["region"]


def _filters(instance_type: str, region: str) -> list[dict[str, str]]:
    values = {"regionCode": region, "instanceName": instance_type, "component": "Hosting"}
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in values.items()]


def _on_demand_hourly(product: dict[str, Any]) -> float | None:
    for term in product.get("terms", {}).get("OnDemand", {}).values():
        for dimension in term.get("priceDimensions", {}).values():
            usd = dimension.get("pricePerUnit", {}).get("USD")
            if dimension.get("unit") == "Hrs" and usd is not None and float(usd) > 0:
                return float(usd)
    return None


def fetch_prices(pricing_client: Any, instance_types: Iterable[str], region: str) -> dict:
    """Hourly on-demand hosting prices from the Price List API, by instance type.

    ``pricing_client`` is a boto3 ``pricing`` client. Types with no hosting price in
    ``region`` are left out.
    """
    prices: dict[str, float] = {}
    for instance_type in instance_types:
        pages = pricing_client.get_paginator("get_products").paginate(
            ServiceCode=SERVICE_CODE, Filters=_filters(instance_type, region)
        )
        for page in pages:
            for item in page["PriceList"]:
                price = _on_demand_hourly(json.loads(item))
                if price is not None:
                    prices[instance_type] = price
    return prices


def regenerated(existing: dict[str, Any], prices: dict[str, float], region: str) -> dict:
    """The data file's content with ``prices`` merged in and the source recorded."""
    merged = dict(existing["prices"]) if existing.get("region") == region else {}
    merged.update(prices)
    return {
        "source": {
            "id": SOURCE_ID,
            "what": "AWS Price List API GetProducts, service AmazonSageMaker, component "
            "Hosting, on-demand USD per instance-hour",
            "retrieved": datetime.date.today().isoformat(),
            "regenerate": "python -m fm_platform.hardware.prices --region " + region,
        },
        "region": region,
        "currency": "USD",
        "unit": "instance-hour",
        "prices": dict(sorted(merged.items())),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the data file with fresh prices for its types (plus ``--add`` ones)."""
    import boto3

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--add", nargs="*", default=[], metavar="ML_TYPE")
    args = parser.parse_args(argv)
    path = Path(str(resources.files("fm_platform.hardware").joinpath(DATA_FILE)))
    existing = json.loads(path.read_text())
    types = sorted({*existing["prices"], *args.add})
    client = boto3.client("pricing", region_name="us-east-1")
    data = regenerated(existing, fetch_prices(client, types, args.region), args.region)
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(f"{len(data['prices'])} prices for {args.region} written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
