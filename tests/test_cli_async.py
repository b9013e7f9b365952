"""Asynchronous endpoints: `fmp endpoint invoke-async`, and the backlog in `fmp endpoint status`,
against stubbed SageMaker, runtime and CloudWatch."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from tests.cli_support import LAUNCHED, StubbedClients, hermetic_aws_env, run
from tests.test_cli_endpoint import ENDPOINT_ARN

NOW = datetime.datetime(2024, 5, 1, 13, 0, 42, tzinfo=datetime.timezone.utc)
END = datetime.datetime(2024, 5, 1, 13, 0, tzinfo=datetime.timezone.utc)
OUTPUT = "s3://results/async/out"
FAILURES = "s3://results/async/failed"


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)
    monkeypatch.setattr("fm_platform.cli.cloudwatch.utc_now", lambda: NOW)


def stub_invoke(clients: StubbedClients, request: dict[str, Any]) -> None:
    clients.stub("sagemaker-runtime").add_response(
        "invoke_endpoint_async",
        {
            "InferenceId": "req-1",
            "OutputLocation": f"{OUTPUT}/req-1.out",
            "FailureLocation": f"{FAILURES}/req-1-error.out",
        },
        {"EndpointName": "transcribe", **request},
    )


def test_invoke_async_prints_where_the_result_goes(capsys: Any) -> None:
    clients = StubbedClients()
    stub_invoke(
        clients, {"InputLocation": "s3://in/requests/1.json", "ContentType": "application/json"}
    )
    argv = ["endpoint", "invoke-async", "transcribe", "--input", "s3://in/requests/1.json"]
    code, out, err = run(argv, clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    assert [line.split(maxsplit=2)[-1] for line in out.splitlines()] == [
        "req-1",
        f"{OUTPUT}/req-1.out",
        f"{FAILURES}/req-1-error.out",
    ]
    assert out.startswith("Inference ID  req-1\nOutput")


def test_invoke_async_passes_every_option_and_prints_json(capsys: Any) -> None:
    clients = StubbedClients()
    stub_invoke(
        clients,
        {
            "InputLocation": "s3://in/audio.wav",
            "ContentType": "audio/wav",
            "Accept": "application/json",
            "InferenceId": "nightly-42",
            "InvocationTimeoutSeconds": 3600,
            "RequestTTLSeconds": 21600,
        },
    )
    argv = ["endpoint", "invoke-async", "--endpoint", "transcribe", "--input", "s3://in/audio.wav"]
    argv += ["--content-type", "audio/wav", "--accept", "application/json"]
    argv += ["--inference-id", "nightly-42", "--invocation-timeout", "3600"]
    argv += ["--request-ttl", "21600", "--json"]
    code, out, _ = run(argv, clients, capsys)
    assert code == 0
    clients.assert_done()
    assert json.loads(out) == {
        "InferenceId": "req-1",
        "OutputLocation": f"{OUTPUT}/req-1.out",
        "FailureLocation": f"{FAILURES}/req-1-error.out",
    }


def test_invoke_async_refuses_values_outside_the_api_limits(capsys: Any) -> None:
    argv = ["endpoint", "invoke-async", "transcribe", "--input", "gs://in/1.json"]
    argv += ["--request-ttl", "30", "--invocation-timeout", "3601", "--inference-id", "x" * 65]
    code, out, err = run(argv, StubbedClients(), capsys)
    assert (code, out) == (1, "")
    problems = err.removeprefix("fmp: error: ").rstrip("\n").split("; ")
    assert problems == [
        "--input gs://in/1.json: does not match ^(https|s3)://([^/]+)/?(.*)$ "
        "(InvokeEndpointAsync InputLocation)",
        f"--inference-id {'x' * 65}: longer than 64 characters (InvokeEndpointAsync InferenceId)",
        "--invocation-timeout 3601: above the maximum 3600 "
        "(InvokeEndpointAsync InvocationTimeoutSeconds)",
        "--request-ttl 30: below the minimum 60 (InvokeEndpointAsync RequestTTLSeconds)",
    ]


def test_invoke_async_help_shows_the_limits_from_the_api(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        run(["endpoint", "invoke-async", "--help"], StubbedClients(), capsys)
    text = " ".join(capsys.readouterr().out.split())
    assert "seconds the model may take, 1-3600" in text
    assert "seconds the request may wait in the queue, 60-21600" in text


def stub_async_endpoint(clients: StubbedClients, results: list[dict[str, Any]]) -> None:
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response(
        "describe_endpoint",
        {
            "EndpointName": "transcribe",
            "EndpointArn": ENDPOINT_ARN,
            "EndpointConfigName": "transcribe-config",
            "EndpointStatus": "InService",
            "CreationTime": LAUNCHED,
            "LastModifiedTime": LAUNCHED,
            "ProductionVariants": [
                {"VariantName": "AllTraffic", "CurrentInstanceCount": 0, "DesiredInstanceCount": 1}
            ],
            "AsyncInferenceConfig": {
                "OutputConfig": {"S3OutputPath": OUTPUT, "S3FailurePath": FAILURES}
            },
        },
        {"EndpointName": "transcribe"},
    )
    sagemaker.add_response(
        "list_inference_components",
        {"InferenceComponents": []},
        {"EndpointNameEquals": "transcribe"},
    )
    queries = [
        {
            "Id": f"q{i}",
            "MetricStat": {
                "Metric": {
                    "Namespace": "AWS/SageMaker",
                    "MetricName": metric,
                    "Dimensions": [{"Name": "EndpointName", "Value": "transcribe"}],
                },
                "Period": 60,
                "Stat": "Average",
            },
        }
        for i, metric in enumerate(["ApproximateBacklogSize", "ApproximateBacklogSizePerInstance"])
    ]
    clients.stub("cloudwatch").add_response(
        "get_metric_data",
        {"MetricDataResults": results},
        {
            "MetricDataQueries": queries,
            "StartTime": END - datetime.timedelta(minutes=15),
            "EndTime": END,
            "ScanBy": "TimestampDescending",
        },
    )


def minutes_ago(minutes: int) -> datetime.datetime:
    return END - datetime.timedelta(minutes=minutes)


def test_status_of_an_async_endpoint_shows_its_backlog(capsys: Any) -> None:
    clients = StubbedClients()
    stub_async_endpoint(
        clients,
        [
            {"Id": "q0", "Timestamps": [minutes_ago(1), minutes_ago(2)], "Values": [12.0, 9.0]},
            {"Id": "q1", "Timestamps": [minutes_ago(1)], "Values": [12.0]},
        ],
    )
    code, out, err = run(["endpoint", "status", "transcribe"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    fields = dict(line.split(maxsplit=1) for line in out.split("\n\n")[0].splitlines())
    assert fields == {
        "Endpoint": "transcribe",
        "Status": "InService",
        "Output": OUTPUT,
        "Failures": FAILURES,
        "Backlog": "12 requests, 12 per instance (at 12:59 UTC)",
    }


def test_status_of_an_idle_async_endpoint(capsys: Any) -> None:
    clients = StubbedClients()
    stub_async_endpoint(clients, [])
    code, out, _ = run(["endpoint", "status", "transcribe", "--json"], clients, capsys)
    assert code == 0
    assert json.loads(out)["AsyncInference"] == {
        "S3OutputPath": OUTPUT,
        "S3FailurePath": FAILURES,
        "ApproximateBacklogSize": None,
        "ApproximateBacklogSizePerInstance": None,
    }


def test_status_text_without_backlog_data(capsys: Any) -> None:
    clients = StubbedClients()
    stub_async_endpoint(clients, [])
    code, out, _ = run(["endpoint", "status", "transcribe"], clients, capsys)
    assert code == 0
    assert "Backlog   no data in the last 15 minutes" in out.splitlines()
