"""Hosting prices: every region the data has, the four main ones complete for what they
offer, and the regeneration from a Price List bulk offer file (a fixture, no network)."""

from __future__ import annotations

import json

import pytest

from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.price_list import hosting_types, main, prices_from_offer
from fm_platform.hardware.prices import hourly_prices, price_regions, price_source, unpriced_types

MAIN_REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "ap-northeast-1")


def test_main_regions_price_g6e_p5_and_cpu_types():
    assert set(MAIN_REGIONS) <= set(price_regions())
    for region in MAIN_REGIONS:
        prices = hourly_prices(region)
        assert {"ml.g5.xlarge", "ml.c6i.xlarge", "ml.m7i.xlarge", "ml.p4d.24xlarge"} <= set(prices)
        assert set(prices) | set(unpriced_types(region)) == set(hosting_types())
    assert "ml.g6e.xlarge" in hourly_prices("us-east-1") and "ml.p5.48xlarge" in hourly_prices()
    assert price_source()["license"] == "MIT"


def test_every_hosting_type_with_hardware_figures_is_priced_somewhere_or_listed():
    priced = {t for r in price_regions() for t in hourly_prices(r)}
    for instance_type, price in hourly_prices("us-west-2").items():
        assert instance_spec(instance_type).instance_type == instance_type and price > 0
    never = set(hosting_types()) - priced
    assert never <= {t for r in MAIN_REGIONS for t in unpriced_types(r)}


def test_an_unknown_region_names_the_known_ones():
    with pytest.raises(ValueError, match="region 'mars-1' has no hosting prices.*us-east-1"):
        hourly_prices("mars-1")


def _offer(region: str, sku_prices: dict[str, tuple[str, str, str]]) -> dict:
    products, terms = {}, {}
    for sku, (name, component, usd) in sku_prices.items():
        products[sku] = {
            "sku": sku,
            "attributes": {"regionCode": region, "instanceName": name, "component": component},
        }
        dimension = {"unit": "Hrs", "pricePerUnit": {"USD": usd}}
        terms[sku] = {f"{sku}.T": {"priceDimensions": {f"{sku}.T.D": dimension}}}
    return {
        "publicationDate": "2026-11-30T00:00:00Z",
        "products": products,
        "terms": {"OnDemand": terms},
    }


def test_prices_are_read_from_a_bulk_offer_file(tmp_path):
    offer = _offer(
        "eu-west-1",
        {
            "A": ("ml.g5.xlarge", "Hosting", "1.5750000000"),
            "B": ("ml.g5.xlarge", "Hosting", "1.6000000000"),  # a second SKU: the highest
            "C": ("ml.g5.xlarge", "Training", "9.9"),
            "D": ("ml.m5.xlarge", "Hosting", "0.0000000000"),
            "E": ("ml.unknown.xlarge", "Hosting", "1.0"),
        },
    )
    assert prices_from_offer(offer, hosting_types()) == {"eu-west-1": {"ml.g5.xlarge": 1.6}}
    path, output = tmp_path / "eu-west-1.json", tmp_path / "prices.json"
    path.write_text(json.dumps(offer))
    assert main(["--offer-file", str(path), "--output", str(output)]) == 0
    data = json.loads(output.read_text())
    assert data["regions"] == {"eu-west-1": {"ml.g5.xlarge": 1.6}}
    assert "ml.m5.xlarge" in data["unpriced"]["eu-west-1"]
    assert data["source"]["published"] == "2026-11-30T00:00:00Z"


def test_without_offer_files_the_region_index_is_downloaded(tmp_path):
    offers = {
        "index": {"regions": {"us-east-1": {"currentVersionUrl": "/offers/us-east-1.json"}}},
        "/offers/us-east-1.json": _offer("us-east-1", {"A": ("ml.c6i.xlarge", "Hosting", "0.2")}),
    }

    def fetch(url: str):
        return (
            offers["index"]
            if url.endswith("region_index.json")
            else offers[url.removeprefix("https://pricing.us-east-1.amazonaws.com")]
        )

    output = tmp_path / "prices.json"
    assert main(["--output", str(output)], fetch=fetch) == 0
    assert json.loads(output.read_text())["regions"] == {"us-east-1": {"ml.c6i.xlarge": 0.2}}
