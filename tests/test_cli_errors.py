"""Every AWS failure becomes one `fmp: error:` line on stderr and a non-zero exit."""

from __future__ import annotations

from typing import Any

import pytest

from fm_platform.cli.main import main
from tests.cli_support import StubbedClients, hermetic_aws_env, run


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)


def assert_one_line_error(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 1
    assert out == ""
    assert err.startswith("fmp: error: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def test_no_credentials(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code = main(["cluster", "status", "--cluster", "c"])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, "no AWS credentials", "--profile")


def test_no_region(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    code = main(["endpoint", "status", "--endpoint", "e"])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, "no AWS region set", "--region")


def test_unknown_profile(capsys: Any) -> None:
    code = main(["--profile", "nope", "cluster", "nodes", "--cluster", "c"])
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, "nope", "--profile")


def test_missing_stack(capsys: Any) -> None:
    clients = StubbedClients(region="eu-west-1")
    clients.stub("cloudformation").add_client_error(
        "describe_stacks",
        service_error_code="ValidationError",
        service_message="Stack with id FmpTraining does not exist",
        http_status_code=400,
    )
    code, out, err = run(["cluster", "status"], clients, capsys)
    assert_one_line_error(code, out, err)
    assert err == (
        "fmp: error: stack FmpTraining does not exist in region eu-west-1: deploy it "
        "(cdk deploy), check --region/--profile, or name the stack with --stack\n"
    )


def test_missing_cluster(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker").add_client_error(
        "describe_cluster",
        service_error_code="ResourceNotFound",
        service_message="Cluster with name gone not found.",
        http_status_code=400,
    )
    code, out, err = run(["cluster", "status", "--cluster", "gone"], clients, capsys)
    assert_one_line_error(
        code, out, err, "DescribeCluster", "Cluster with name gone not found.", "--region"
    )


@pytest.mark.parametrize("error_code", ["AccessDeniedException", "AccessDenied"])
def test_access_denied(error_code: str, capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker").add_client_error(
        "list_cluster_nodes",
        service_error_code=error_code,
        service_message="User is not authorized to perform: sagemaker:ListClusterNodes",
        http_status_code=403,
    )
    code, out, err = run(["cluster", "nodes", "--cluster", "c"], clients, capsys)
    assert_one_line_error(code, out, err, "access denied calling ListClusterNodes", "--profile")


@pytest.mark.parametrize("error_code", ["ThrottlingException", "Throttling"])
def test_throttled(error_code: str, capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("cloudformation").add_client_error(
        "describe_stacks",
        service_error_code=error_code,
        service_message="Rate exceeded",
        http_status_code=400,
    )
    code, out, err = run(["endpoint", "status"], clients, capsys)
    assert_one_line_error(code, out, err, "AWS throttled DescribeStacks", "retry")


def test_other_service_errors_name_the_operation(capsys: Any) -> None:
    clients = StubbedClients()
    clients.stub("sagemaker").add_client_error(
        "describe_endpoint",
        service_error_code="ValidationException",
        service_message='Could not find endpoint "e".',
    )
    code, out, err = run(["endpoint", "status", "--endpoint", "e"], clients, capsys)
    assert_one_line_error(code, out, err)
    assert err == (
        'fmp: error: DescribeEndpoint failed: ValidationException: Could not find endpoint "e".\n'
    )


def test_unexpected_exceptions_are_not_hidden() -> None:
    class Broken:
        region = None
        profile = None

        def client(self, service: str) -> Any:
            raise RuntimeError("bug")

    with pytest.raises(RuntimeError, match="bug"):
        main(["cluster", "status", "--cluster", "c"], clients=Broken())
