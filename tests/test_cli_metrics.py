"""`fmp endpoint metrics` and the GetMetricData helper, against stubbed SageMaker and
CloudWatch."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from fm_platform.cli.cloudwatch import MetricQuery, fetch
from tests.cli_support import LAUNCHED, StubbedClients, hermetic_aws_env, run
from tests.test_cli_endpoint import ENDPOINT_ARN, described, summary

NOW = datetime.datetime(2024, 5, 1, 13, 0, 42, 123, tzinfo=datetime.timezone.utc)
END = datetime.datetime(2024, 5, 1, 13, 0, tzinfo=datetime.timezone.utc)
START = END - datetime.timedelta(hours=1)


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)
    monkeypatch.setattr("fm_platform.cli.cloudwatch.utc_now", lambda: NOW)


def query(qid: str, metric: str, dimensions: dict[str, str], stat: str) -> dict[str, Any]:
    return {
        "Id": qid,
        "MetricStat": {
            "Metric": {
                "Namespace": "AWS/SageMaker",
                "MetricName": metric,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
            },
            "Period": 3600,
            "Stat": stat,
        },
    }


def hour_queries(first: int, dimensions: dict[str, str]) -> list[dict[str, Any]]:
    """The five queries the command asks for one model, with ids from q<first>."""
    series = [
        ("Invocations", "Sum"),
        ("ModelLatency", "p50"),
        ("ModelLatency", "p90"),
        ("Invocation4XXErrors", "Sum"),
        ("Invocation5XXErrors", "Sum"),
    ]
    return [
        query(f"q{first + i}", metric, dimensions, stat) for i, (metric, stat) in enumerate(series)
    ]


def result(qid: str, *values: float) -> dict[str, Any]:
    return {
        "Id": qid,
        "Timestamps": [START] * len(values),
        "Values": list(values),
        "StatusCode": "Complete",
    }


def describe_endpoint(clients: StubbedClients, variants: list[dict[str, Any]]) -> None:
    clients.stub("sagemaker").add_response(
        "describe_endpoint",
        {
            "EndpointName": "shared-g5",
            "EndpointArn": ENDPOINT_ARN,
            "EndpointStatus": "InService",
            "CreationTime": LAUNCHED,
            "LastModifiedTime": LAUNCHED,
            "ProductionVariants": variants,
        },
        {"EndpointName": "shared-g5"},
    )


def stub_component_endpoint(clients: StubbedClients) -> None:
    describe_endpoint(clients, [{"VariantName": "AllTraffic", "CurrentInstanceCount": 2}])
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response(
        "list_inference_components",
        {"InferenceComponents": [summary("llama-7b"), summary("flan-t5")]},
        {"EndpointNameEquals": "shared-g5"},
    )
    for name, current in (("llama-7b", 3), ("flan-t5", 0)):
        sagemaker.add_response(
            "describe_inference_component",
            described(name, "InService", current, current),
            {"InferenceComponentName": name},
        )
    clients.stub("cloudwatch").add_response(
        "get_metric_data",
        {
            "MetricDataResults": [
                result("q0", 100, 20),  # two buckets of a Sum are added
                result("q1", 850_000),
                result("q2", 1_234_567),
                result("q3", 2),
                result("q4", 0),
                result("q5"),  # flan-t5 is idle: no data at all
                result("q6"),
                result("q7"),
                result("q8"),
                result("q9"),
            ]
        },
        {
            "MetricDataQueries": hour_queries(0, {"InferenceComponentName": "llama-7b"})
            + hour_queries(5, {"InferenceComponentName": "flan-t5"}),
            "StartTime": START,
            "EndTime": END,
            "ScanBy": "TimestampDescending",
        },
    )


def test_metrics_per_inference_component(capsys: Any) -> None:
    clients = StubbedClients()
    stub_component_endpoint(clients)
    code, out, err = run(["endpoint", "metrics", "shared-g5"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    lines = out.splitlines()
    assert lines[0] == "Endpoint shared-g5, 2024-05-01 12:00 to 13:00 UTC"
    assert lines[2].split() == [
        "INFERENCE",
        "COMPONENT",
        "INVOCATIONS",
        "P50",
        "MS",
        "P90",
        "MS",
        "4XX",
        "5XX",
        "COPIES",
    ]
    assert lines[3].split() == ["llama-7b", "120", "850", "1234.6", "2", "0", "3"]
    assert lines[4].split() == ["flan-t5", "-", "-", "-", "-", "-", "0"]


def test_metrics_json(capsys: Any) -> None:
    clients = StubbedClients()
    stub_component_endpoint(clients)
    code, out, _ = run(
        ["endpoint", "metrics", "--endpoint", "shared-g5", "--json"], clients, capsys
    )
    assert code == 0
    data = json.loads(out)
    assert (data["EndpointName"], data["Per"]) == ("shared-g5", "InferenceComponentName")
    assert (data["StartTime"], data["EndTime"]) == (START.isoformat(), END.isoformat())
    assert data["Rows"][0] == {
        "Name": "llama-7b",
        "Invocations": 120,
        "ModelLatencyP50Ms": 850,
        "ModelLatencyP90Ms": 1234.6,
        "Invocation4XXErrors": 2,
        "Invocation5XXErrors": 0,
        "CurrentCopyCount": 3,
    }
    assert data["Rows"][1]["Invocations"] is None


def test_metrics_per_variant_without_components(capsys: Any) -> None:
    clients = StubbedClients()
    describe_endpoint(
        clients,
        [
            {"VariantName": "blue", "CurrentInstanceCount": 2},
            {"VariantName": "green", "CurrentInstanceCount": 1},
        ],
    )
    clients.stub("sagemaker").add_response(
        "list_inference_components",
        {"InferenceComponents": []},
        {"EndpointNameEquals": "shared-g5"},
    )
    blue = {"EndpointName": "shared-g5", "VariantName": "blue"}
    green = {"EndpointName": "shared-g5", "VariantName": "green"}
    clients.stub("cloudwatch").add_response(
        "get_metric_data",
        {"MetricDataResults": [result("q0", 7), result("q5", 3), result("q7", 1500)]},
        {
            "MetricDataQueries": hour_queries(0, blue) + hour_queries(5, green),
            "StartTime": START,
            "EndTime": END,
            "ScanBy": "TimestampDescending",
        },
    )
    code, out, err = run(["endpoint", "metrics", "shared-g5"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    lines = out.splitlines()
    assert lines[2].split()[0] == "VARIANT"
    assert lines[2].split()[-1] == "INSTANCES"
    assert lines[3].split() == ["blue", "7", "-", "-", "-", "-", "2"]
    assert lines[4].split() == ["green", "3", "-", "1.5", "-", "-", "1"]


def test_fetch_splits_queries_into_calls_of_500_and_reads_every_page() -> None:
    clients = StubbedClients()
    stub = clients.stub("cloudwatch")
    queries = [
        MetricQuery("AWS/SageMaker", "Invocations", {"I": str(i)}, "Sum") for i in range(501)
    ]

    def request(first: int, last: int) -> list[dict[str, Any]]:
        return [
            {
                "Id": f"q{i}",
                "MetricStat": {
                    "Metric": {
                        "Namespace": "AWS/SageMaker",
                        "MetricName": "Invocations",
                        "Dimensions": [{"Name": "I", "Value": str(i)}],
                    },
                    "Period": 60,
                    "Stat": "Sum",
                },
            }
            for i in range(first, last)
        ]

    window = {"StartTime": START, "EndTime": END, "ScanBy": "TimestampDescending"}
    later = START + datetime.timedelta(minutes=1)
    stub.add_response(
        "get_metric_data",
        {"MetricDataResults": [result("q3", 1)], "NextToken": "page2"},
        {"MetricDataQueries": request(0, 500), **window},
    )
    stub.add_response(
        "get_metric_data",
        {"MetricDataResults": [{"Id": "q3", "Timestamps": [later], "Values": [2.0]}]},
        {"MetricDataQueries": request(0, 500), "NextToken": "page2", **window},
    )
    stub.add_response(
        "get_metric_data",
        {"MetricDataResults": [result("q500", 5)]},
        {"MetricDataQueries": request(500, 501), **window},
    )
    points = fetch(clients.client("cloudwatch"), queries, start=START, end=END, period=60)
    clients.assert_done()
    assert points[3] == [(START, 1.0), (later, 2.0)]
    assert points[500] == [(START, 5.0)]
    assert sum(1 for p in points if p) == 2
