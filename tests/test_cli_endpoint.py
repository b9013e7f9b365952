"""`fmp endpoint status|invoke` against stubbed SageMaker, runtime and CloudFormation."""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.eventstream import EventStream
from botocore.parsers import EventStreamJSONParser
from botocore.response import StreamingBody

from fm_platform.cli.endpoint import write_stream
from tests.cli_support import (
    LAUNCHED,
    StubbedClients,
    hermetic_aws_env,
    run,
    stack_response,
)

ACCOUNT_ARN = "arn:aws:sagemaker:us-east-1:111122223333"
ENDPOINT_ARN = f"{ACCOUNT_ARN}:endpoint/shared-g5"


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)


def with_stack(clients: StubbedClients, names: str) -> None:
    clients.stub("cloudformation").add_response(
        "describe_stacks",
        stack_response("FmpInference", {"EndpointNames": names}),
        {"StackName": "FmpInference"},
    )


def summary(name: str) -> dict[str, Any]:
    return {
        "InferenceComponentName": name,
        "InferenceComponentArn": f"{ACCOUNT_ARN}:inference-component/{name}",
        "EndpointName": "shared-g5",
        "EndpointArn": ENDPOINT_ARN,
        "VariantName": "AllTraffic",
        "CreationTime": LAUNCHED,
        "LastModifiedTime": LAUNCHED,
    }


def described(name: str, status: str, current: int, desired: int, **extra: Any) -> dict[str, Any]:
    return {
        **summary(name),
        "InferenceComponentStatus": status,
        "RuntimeConfig": {"CurrentCopyCount": current, "DesiredCopyCount": desired},
        **extra,
    }


def stub_endpoint(clients: StubbedClients) -> None:
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response(
        "describe_endpoint",
        {
            "EndpointName": "shared-g5",
            "EndpointArn": ENDPOINT_ARN,
            "EndpointStatus": "InService",
            "CreationTime": LAUNCHED,
            "LastModifiedTime": LAUNCHED,
            "ProductionVariants": [
                {"VariantName": "AllTraffic", "CurrentInstanceCount": 2, "DesiredInstanceCount": 3}
            ],
        },
        {"EndpointName": "shared-g5"},
    )
    sagemaker.add_response(
        "list_inference_components",
        {"InferenceComponents": [summary("llama-7b")], "NextToken": "more"},
        {"EndpointNameEquals": "shared-g5"},
    )
    sagemaker.add_response(
        "list_inference_components",
        {"InferenceComponents": [summary("flan-t5")]},
        {"EndpointNameEquals": "shared-g5", "NextToken": "more"},
    )
    sagemaker.add_response(
        "describe_inference_component",
        described("llama-7b", "InService", 2, 2),
        {"InferenceComponentName": "llama-7b"},
    )
    sagemaker.add_response(
        "describe_inference_component",
        described("flan-t5", "Failed", 0, 1, FailureReason="image pull failed"),
        {"InferenceComponentName": "flan-t5"},
    )


def test_status_lists_variants_and_every_component_page(capsys: Any) -> None:
    clients = StubbedClients()
    with_stack(clients, "shared-g5")
    stub_endpoint(clients)
    code, out, err = run(["endpoint", "status"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    lines = out.splitlines()
    assert lines[0].split() == ["Endpoint", "shared-g5"]
    assert lines[1].split() == ["Status", "InService"]
    variant = lines.index(next(line for line in lines if line.startswith("VARIANT")))
    assert lines[variant + 1].split() == ["AllTraffic", "2", "3"]
    header = lines.index(next(line for line in lines if line.startswith("INFERENCE COMPONENT")))
    assert lines[header + 1].split() == ["llama-7b", "AllTraffic", "InService", "2", "2"]
    assert lines[header + 2].split() == ["flan-t5", "AllTraffic", "Failed", "0", "1"]
    assert "flan-t5 failed: image pull failed" in lines


def test_status_json(capsys: Any) -> None:
    clients = StubbedClients()
    stub_endpoint(clients)
    code, out, _ = run(["endpoint", "status", "--endpoint", "shared-g5", "--json"], clients, capsys)
    assert code == 0
    data = json.loads(out)
    assert data["ProductionVariants"] == [
        {"VariantName": "AllTraffic", "CurrentInstanceCount": 2, "DesiredInstanceCount": 3}
    ]
    assert [
        (c["InferenceComponentName"], c["CurrentCopyCount"], c["DesiredCopyCount"])
        for c in data["InferenceComponents"]
    ] == [("llama-7b", 2, 2), ("flan-t5", 0, 1)]


def test_several_endpoints_in_the_stack_need_endpoint(capsys: Any) -> None:
    clients = StubbedClients()
    with_stack(clients, "shared-g5, isolated-p4d")
    code, out, err = run(["endpoint", "status"], clients, capsys)
    assert (code, out) == (1, "")
    assert err == (
        "fmp: error: stack FmpInference has 2 endpoints (shared-g5, isolated-p4d): "
        "choose one with --endpoint NAME\n"
    )


def test_invoke_sends_the_body_to_the_component(capsysbinary: Any, tmp_path: Path) -> None:
    body = tmp_path / "request.json"
    body.write_bytes(b'{"inputs": "hello"}')
    clients = StubbedClients()
    with_stack(clients, "shared-g5")
    clients.stub("sagemaker-runtime").add_response(
        "invoke_endpoint",
        {"Body": StreamingBody(io.BytesIO(b'{"generated_text": "hi"}'), 24)},
        {
            "EndpointName": "shared-g5",
            "InferenceComponentName": "llama-7b",
            "ContentType": "application/json",
            "Body": b'{"inputs": "hello"}',
        },
    )
    code, out, err = run(
        ["endpoint", "invoke", "--component", "llama-7b", "--body", str(body)],
        clients,
        capsysbinary,
    )
    assert (code, err) == (0, b"")
    clients.assert_done()
    assert out == b'{"generated_text": "hi"}'


def test_invoke_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsysbinary: Any) -> None:
    class Stdin:
        buffer = io.BytesIO(b"raw text")

    monkeypatch.setattr("sys.stdin", Stdin())
    clients = StubbedClients()
    clients.stub("sagemaker-runtime").add_response(
        "invoke_endpoint",
        {"Body": StreamingBody(io.BytesIO(b"ok"), 2)},
        {
            "EndpointName": "e",
            "InferenceComponentName": "c",
            "ContentType": "text/plain",
            "Accept": "text/plain",
            "Body": b"raw text",
        },
    )
    argv = ["endpoint", "invoke", "--endpoint", "e", "--component", "c"]
    argv += ["--content-type", "text/plain", "--accept", "text/plain"]
    code, out, _ = run(argv, clients, capsysbinary)
    assert (code, out) == (0, b"ok")


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack(">B", len(raw_name))
        + raw_name
        + struct.pack(">BH", 7, len(raw_value))
        + raw_value
    )


def event_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One message in the AWS event-stream binary format (prelude, headers, payload, CRCs)."""
    encoded = b"".join(_header(k, v) for k, v in headers.items())
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def payload_part(data: bytes) -> bytes:
    headers = {":message-type": "event", ":event-type": "PayloadPart"}
    return event_message({**headers, ":content-type": "application/octet-stream"}, data)


class RawStream:
    """The HTTP body botocore's EventStream reads from."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def stream(self) -> Any:
        yield from self.chunks

    def close(self) -> None:
        pass


def stub_stream(clients: StubbedClients, chunks: list[bytes]) -> list[dict[str, Any]]:
    """Answer InvokeEndpointWithResponseStream with a real EventStream over `chunks`.

    botocore's Stubber cannot hold an EventStream (it validates Body as a structure), so it
    is switched off and a before-call handler answers instead, as the Stubber itself does.
    Returns the serialized requests.
    """
    stubber = clients.stub("sagemaker-runtime")
    stubber.deactivate()
    client = stubber.client
    operation = client.meta.service_model.operation_model("InvokeEndpointWithResponseStream")
    requests: list[dict[str, Any]] = []

    def answer(params: dict[str, Any], **_: Any) -> tuple[Any, dict[str, Any]]:
        requests.append(params)
        body = EventStream(
            RawStream(chunks),
            operation.output_shape.members["Body"],
            EventStreamJSONParser(),
            operation.name,
        )
        return AWSResponse("https://runtime", 200, {}, None), {"Body": body}

    client.meta.events.register(
        "before-call.sagemaker-runtime.InvokeEndpointWithResponseStream", answer
    )
    return requests


def test_invoke_stream_prints_payload_parts(capsysbinary: Any, tmp_path: Path) -> None:
    body = tmp_path / "request.json"
    body.write_bytes(b'{"inputs": "hi", "stream": true}')
    clients = StubbedClients()
    requests = stub_stream(clients, [payload_part(b"Hel"), payload_part(b"lo")])
    argv = ["endpoint", "invoke", "--endpoint", "e", "--component", "c", "--body", str(body)]
    code, out, err = run([*argv, "--stream"], clients, capsysbinary)
    assert (code, out, err) == (0, b"Hello", b"")
    [request] = requests
    assert request["url_path"] == "/endpoints/e/invocations-response-stream"
    assert request["headers"]["X-Amzn-SageMaker-Inference-Component"] == "c"
    assert request["body"] == b'{"inputs": "hi", "stream": true}'


def test_invoke_stream_model_error_is_one_line(capsysbinary: Any, tmp_path: Path) -> None:
    body = tmp_path / "request.json"
    body.write_bytes(b"{}")
    clients = StubbedClients()
    error = event_message(
        {
            ":message-type": "exception",
            ":exception-type": "ModelStreamError",
            ":content-type": "application/json",
        },
        json.dumps({"Message": "CUDA out of memory", "ErrorCode": "ModelError"}).encode(),
    )
    stub_stream(clients, [payload_part(b"par"), error])
    argv = ["endpoint", "invoke", "--endpoint", "e", "--component", "c", "--body", str(body)]
    code, out, err = run([*argv, "--stream"], clients, capsysbinary)
    assert (code, out) == (1, b"par")
    assert err.startswith(b"fmp: error: ")
    assert b"ModelStreamError" in err
    assert b"CUDA out of memory" in err
    assert err.count(b"\n") == 1
    assert b"Traceback" not in err


class RecordingOut(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[bytes] = []

    def flush(self) -> None:
        self.flushed.append(self.getvalue())


def test_write_stream_flushes_each_part_as_it_arrives() -> None:
    out = RecordingOut()
    written = write_stream(
        iter([{"PayloadPart": {"Bytes": b"a"}}, {"Other": {}}, {"PayloadPart": {"Bytes": b"bc"}}]),
        out,
    )
    assert written == 3
    assert out.flushed == [b"a", b"abc"]


def test_invoke_without_body_on_a_terminal(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    class Tty(io.BytesIO):
        def isatty(self) -> bool:
            return True

    class Stdin:
        buffer = Tty()

    monkeypatch.setattr("sys.stdin", Stdin())
    clients = StubbedClients()
    argv = ["endpoint", "invoke", "--endpoint", "e", "--component", "c"]
    code, _, err = run(argv, clients, capsys)
    assert code == 1
    assert err == "fmp: error: no request body: pass --body FILE or pipe the body on stdin\n"


def test_invoke_requires_component(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run(["endpoint", "invoke", "--endpoint", "e"], StubbedClients(), capsys)
    assert exit_info.value.code == 2
    assert "--component" in capsys.readouterr().err


def test_status_takes_the_endpoint_as_an_argument(capsys: Any) -> None:
    clients = StubbedClients()
    stub_endpoint(clients)
    code, out, err = run(["endpoint", "status", "shared-g5"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    assert out.splitlines()[0].split() == ["Endpoint", "shared-g5"]
