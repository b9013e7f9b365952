"""Hosting prices: the shipped data and their regeneration from the Price List API."""

from __future__ import annotations

import json

import boto3
from botocore.stub import Stubber

from fm_platform.hardware.instances import instance_spec
from fm_platform.hardware.prices import fetch_prices, hourly_prices, regenerated


def test_every_priced_type_has_hardware_figures():
    for instance_type, price in hourly_prices().items():
        assert instance_spec(instance_type).instance_type == instance_type
        assert price > 0


def _product(usd: str) -> str:
    dimension = {"unit": "Hrs", "pricePerUnit": {"USD": usd}}
    return json.dumps(
        {
            "product": {"attributes": {"instanceName": "ml.g5.xlarge", "component": "Hosting"}},
            "terms": {"OnDemand": {"SKU.T": {"priceDimensions": {"SKU.T.D": dimension}}}},
        }
    )


def test_prices_are_fetched_with_hosting_filters():
    client = boto3.client(
        "pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    stubber = Stubber(client)
    filters = [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "eu-west-1"},
        {"Type": "TERM_MATCH", "Field": "instanceName", "Value": "ml.g5.xlarge"},
        {"Type": "TERM_MATCH", "Field": "component", "Value": "Hosting"},
    ]
    stubber.add_response(
        "get_products",
        {"PriceList": [_product("1.5750000000")], "FormatVersion": "aws_v1"},
        {"ServiceCode": "AmazonSageMaker", "Filters": filters},
    )
    with stubber:
        prices = fetch_prices(client, ["ml.g5.xlarge"], "eu-west-1")
    stubber.assert_no_pending_responses()
    assert prices == {"ml.g5.xlarge": 1.575}
    data = regenerated(
        {"region": "us-east-1", "prices": {"ml.m5.xlarge": 0.23}}, prices, "eu-west-1"
    )
    assert data["prices"] == {"ml.g5.xlarge": 1.575}
    assert data["region"] == "eu-west-1" and data["source"]["retrieved"]
