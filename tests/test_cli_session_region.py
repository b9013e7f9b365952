"""`fmp`'s AWS clients take the region the AWS SDKs document: --region, then AWS_REGION,
then botocore's own order (AWS_DEFAULT_REGION, the profile)."""

from __future__ import annotations

import pytest

from fm_platform.cli.context import SessionClients


def test_aws_region_is_read_when_no_flag_is_given() -> None:
    clients = SessionClients(environ={"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-2"})
    assert clients.region == "eu-west-1"
    assert clients.client("sagemaker").meta.region_name == "eu-west-1"


def test_the_flag_wins_over_aws_region() -> None:
    clients = SessionClients(region="ap-south-1", environ={"AWS_REGION": "eu-west-1"})
    assert clients.client("sagemaker").meta.region_name == "ap-south-1"


def test_without_aws_region_botocore_resolves_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-2")
    clients = SessionClients(environ={})
    assert clients.region is None
    assert clients.client("sagemaker").meta.region_name == "us-east-2"
