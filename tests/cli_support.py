"""Helpers for the `fmp` tests: stubbed AWS clients and a hermetic AWS environment."""

from __future__ import annotations

import datetime
from typing import Any

import boto3
import botocore.loaders
import botocore.session
import pytest
from botocore.stub import Stubber

from fm_platform.cli.main import main

REGION = "us-east-1"
CLUSTER_ARN = "arn:aws:sagemaker:us-east-1:111122223333:cluster/k2x9abcd1234"
LAUNCHED = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)
#: One botocore data loader for every test's session: it keeps the service models it has
#: parsed (SageMaker's is large), which a new session's loader would read again.
_LOADER = botocore.loaders.create_loader()


def hermetic_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Fake credentials and region, no config files, no instance metadata."""
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


class StubbedClients:
    """A ClientFactory whose clients are real botocore clients behind Stubbers.

    `region` and `profile` stand for --region and --profile (not given by default).
    Only services stubbed with `stub()` may be used; any other raises KeyError.
    """

    def __init__(self, region: str | None = None, profile: str | None = None) -> None:
        self.region = region
        self.profile = profile
        core = botocore.session.get_session()
        core.register_component("data_loader", _LOADER)
        self._session = boto3.Session(
            botocore_session=core,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        self._clients: dict[str, Any] = {}
        self.stubbers: dict[str, Stubber] = {}

    def stub(self, service: str) -> Stubber:
        if service not in self.stubbers:
            client = self._session.client(service)
            stubber = Stubber(client)
            stubber.activate()
            self._clients[service] = client
            self.stubbers[service] = stubber
        return self.stubbers[service]

    def client(self, service: str) -> Any:
        return self._clients[service]

    def assert_done(self) -> None:
        for stubber in self.stubbers.values():
            stubber.assert_no_pending_responses()


def stack_response(name: str, outputs: dict[str, str]) -> dict[str, Any]:
    """A DescribeStacks response for one deployed stack."""
    return {
        "Stacks": [
            {
                "StackName": name,
                "CreationTime": LAUNCHED,
                "StackStatus": "CREATE_COMPLETE",
                "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()],
            }
        ]
    }


def node(instance_id: str, group: str, status: str = "Running") -> dict[str, Any]:
    """One ListClusterNodes summary."""
    return {
        "InstanceGroupName": group,
        "InstanceId": instance_id,
        "InstanceType": "ml.m5.xlarge" if group == "controller" else "ml.p5.48xlarge",
        "LaunchTime": LAUNCHED,
        "InstanceStatus": {"Status": status},
    }


def run(argv: list[str], clients: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run `fmp argv` with `clients`; returns (exit code, stdout, stderr)."""
    code = main(argv, clients=clients)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
