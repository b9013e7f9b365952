"""Regenerate ``instance_prices.json`` (:mod:`fm_platform.hardware.prices`) from the AWS
Price List bulk offer files of ``AmazonSageMaker`` (one JSON file per region; real-time hosting is
``component`` = ``Hosting``; where a type has several on-demand SKUs the highest price is
kept)::

    python -m fm_platform.hardware.price_list                      # downloads every region's file
    python -m fm_platform.hardware.price_list --offer-file us-east-1.json --offer-file ...

Without ``--offer-file`` the command reads the region index
(:data:`REGION_INDEX_URL`) and each region's current offer file (no credentials needed).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from fm_platform.hardware.prices import DATA_FILE

PRICE_LIST_HOST = "https://pricing.us-east-1.amazonaws.com"
REGION_INDEX_URL = f"{PRICE_LIST_HOST}/offers/v1.0/aws/AmazonSageMaker/current/region_index.json"
HOSTING_COMPONENT = "Hosting"


def _on_demand_hourly(terms: Mapping[str, Any], sku: str) -> float | None:
    """The highest positive hourly on-demand USD price of ``sku`` in an offer's terms."""
    best = None
    for term in terms.get("OnDemand", {}).get(sku, {}).values():
        for dimension in term.get("priceDimensions", {}).values():
            if dimension.get("unit") != "Hrs":
                continue
            usd = float(dimension.get("pricePerUnit", {}).get("USD", "0"))
            if usd > 0 and (best is None or usd > best):
                best = usd
    return best


def prices_from_offer(offer: Mapping[str, Any], wanted: Iterable[str]) -> dict[str, dict]:
    """``{region: {type: USD per hour}}`` of the real-time hosting SKUs of one bulk offer
    file, for the types in ``wanted``; the highest price where a type has several SKUs."""
    types = set(wanted)
    prices: dict[str, dict[str, float]] = {}
    for sku, product in offer.get("products", {}).items():
        attributes = product.get("attributes", {})
        name = attributes.get("instanceName", "")
        if attributes.get("component") != HOSTING_COMPONENT or name not in types:
            continue
        price = _on_demand_hourly(offer.get("terms", {}), sku)
        region = attributes.get("regionCode")
        if price is None or not region:
            continue
        known = prices.setdefault(region, {})
        known[name] = max(price, known.get(name, 0.0))
    return prices


def hosting_types() -> list[str]:
    """The ``ml.*`` types with hardware figures that real-time hosting offers."""
    records = json.loads(
        resources.files("fm_platform.hardware").joinpath("instance_specs.json").read_text()
    )["instance_types"]
    return sorted(t for t, r in records.items() if "hosting" in r["sagemaker_apis"])


def price_data(
    regions: Mapping[str, Mapping[str, float]], types: Sequence[str], source: dict[str, Any]
) -> dict[str, Any]:
    """The data file's content for ``regions`` (prices by type), recording per region the
    ``types`` without a price."""
    return {
        "source": source,
        "currency": "USD",
        "unit": "instance-hour",
        "regions": {r: dict(sorted(regions[r].items())) for r in sorted(regions)},
        "unpriced": {r: [t for t in types if t not in regions[r]] for r in sorted(regions)},
    }


def _download(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=300) as response:  # noqa: S310 (fixed https host)
        return json.load(response)


def _offers(files: Sequence[Path], fetch: Callable[[str], Any]) -> Iterable[Mapping[str, Any]]:
    if files:
        for path in files:
            yield json.loads(path.read_text())
        return
    index = fetch(REGION_INDEX_URL)
    for region in index["regions"].values():
        yield fetch(PRICE_LIST_HOST + region["currentVersionUrl"])


def main(argv: Sequence[str] | None = None, fetch: Callable[[str], Any] = _download) -> int:
    """Rewrite the data file (or ``--output``) from bulk offer files."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--offer-file",
        action="append",
        default=[],
        type=Path,
        help="a downloaded AmazonSageMaker offer file (repeatable); default: download all",
    )
    default_output = Path(str(resources.files("fm_platform.hardware").joinpath(DATA_FILE)))
    parser.add_argument("--output", type=Path, default=default_output)
    args = parser.parse_args(argv)
    types = hosting_types()
    regions: dict[str, dict[str, float]] = {}
    versions = []
    for offer in _offers(args.offer_file, fetch):
        versions.append(offer.get("publicationDate", "unknown"))
        for region, prices in prices_from_offer(offer, types).items():
            known = regions.setdefault(region, {})
            for name, price in prices.items():
                known[name] = max(price, known.get(name, 0.0))
    if not regions:
        print("no real-time hosting prices found in the offer files", file=sys.stderr)
        return 1
    source = {
        "id": "aws-price-list-bulk",
        "what": "AWS Price List bulk offer files of AmazonSageMaker, component Hosting, "
        "on-demand USD per instance-hour (highest price where a type has several SKUs)",
        "published": max(versions),
        "retrieved": datetime.date.today().isoformat(),
        "regenerate": "python -m fm_platform.hardware.price_list",
    }
    data = price_data(regions, types, source)
    args.output.write_text(json.dumps(data, indent=1) + "\n")
    print(f"prices for {len(regions)} regions written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
