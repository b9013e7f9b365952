"""What botocore documents for a model's container definition, checked on every endpoint
kind's props: a single model's ``ModelDataUrl`` names a ``.tar.gz`` (or a prefix ending in
``/``, read through ``ModelDataSource``), and the environment stays within
``EnvironmentMap``'s limits (100 variables, names of ``EnvironmentKey``, 1024 bytes a name or
value, 32 KB together), each problem named by its key."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest

from fm_platform.constructs.inference.async_endpoint import AsyncEndpoint, AsyncEndpointProps
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointProps,
)
from fm_platform.constructs.inference.serverless_endpoint import (
    ServerlessEndpoint,
    ServerlessEndpointProps,
)
from fm_platform.constructs.inference.single_model_endpoint import (
    SingleModelEndpoint,
    SingleModelEndpointProps,
)
from fm_platform.rules import model_container
from fm_platform.rules.problems import Problems
from tests.components import chat_endpoint, chat_model
from tests.support import new_app

ARCHIVE = "s3://models/chat/model.tar.gz"


def _build(kind: str, container: ModelContainer) -> None:
    """An endpoint of ``kind`` whose model runs ``container`` (a multi-model endpoint takes
    its environment)."""
    stack = cdk.Stack(new_app(), "Hosting")
    if kind == "component":
        chat_model(stack, chat_endpoint(stack), container=container)
    elif kind == "single":
        SingleModelEndpoint(
            stack,
            "Chat",
            SingleModelEndpointProps(
                model_name="chat", instance_type="ml.g5.xlarge", container=container
            ),
        )
    elif kind == "async":
        AsyncEndpoint(
            stack,
            "Chat",
            AsyncEndpointProps(
                model_name="chat", instance_type="ml.g5.xlarge", container=container
            ),
        )
    elif kind == "serverless":
        ServerlessEndpoint(
            stack, "Chat", ServerlessEndpointProps(model_name="chat", container=container)
        )
    else:
        MultiModelEndpoint(
            stack,
            "Chat",
            MultiModelEndpointProps(
                models_s3_prefix="s3://models/m/",
                instance_type="ml.m5.xlarge",
                environment=container.environment,
            ),
        )


def _refusal(kind: str, container: ModelContainer) -> str:
    with pytest.raises(ValueError, match="invalid") as error:
        _build(kind, container)
    return str(error.value)


@pytest.mark.parametrize("kind", ["component", "single", "async", "serverless", "multi"])
def test_every_model_containers_environment_is_checked_by_key(kind):
    where = "environment" if kind == "multi" else "container.environment"
    bad = ModelContainer(
        model_data_url=ARCHIVE, environment={"OPTION_X": "x" * 1025, "9LIVES": "1"}
    )
    message = _refusal(kind, bad)
    assert (
        f"{where}.OPTION_X='value of 1025 bytes': at most 1024 bytes per name and per value "
        "(botocore ContainerDefinition.Environment): shorten it, or move it into a file of the "
        "model's artifacts"
    ) in message
    assert (
        f"{where}.9LIVES='9LIVES': a variable name must match [a-zA-Z_][a-zA-Z0-9_]* (botocore "
        "EnvironmentKey): letters, digits and _, not starting with a digit"
    ) in message


@pytest.mark.parametrize("kind", ["component", "single", "async", "serverless"])
def test_a_model_data_url_neither_archive_nor_prefix_is_refused(kind):
    message = _refusal(kind, ModelContainer(model_data_url="s3://models/chat/model.zip"))
    assert (
        "container.model_data_url='s3://models/chat/model.zip': must name a model.tar.gz "
        "(ending in .tar.gz; botocore ModelDataUrl) or a prefix of uncompressed files ending "
        "in / (ModelDataSource S3Prefix): pack the files with tar czf model.tar.gz -C <dir> . "
        "or end the URL with /"
    ) in message


def test_a_value_known_at_deploy_time_counts_but_is_not_measured():
    # 100 variables and a token: within the limits, whatever the token resolves to.
    environment = {f"V{n}": "1" for n in range(99)} | {"SECRET": cdk.Fn.import_value("x")}
    _build("single", ModelContainer(model_data_url=ARCHIVE, environment=environment))
    environment["EXTRA"] = "1"
    message = _refusal("single", ModelContainer(model_data_url=ARCHIVE, environment=environment))
    assert (
        "container.environment='101 variables': at most 100 (botocore EnvironmentMap)"
    ) in message


def _messages(environment: dict[str, Any]) -> list[str]:
    problems = Problems("rule")
    model_container.check_environment(problems, "environment", environment)
    return list(problems.messages)


def test_the_environment_rule_counts_bytes_and_the_whole_map():
    # Bytes, not characters: 512 two-byte characters are 1024 bytes, one more is too many.
    assert _messages({"A": "é" * 512}) == []
    assert _messages({"A": "é" * 513}) == [
        "environment.A='value of 1026 bytes': at most 1024 bytes per name and per value "
        "(botocore ContainerDefinition.Environment): shorten it, or move it into a file of "
        "the model's artifacts"
    ]
    # 33 variables of 1000-byte values are over 32 KB together, each within its limit.
    [total] = _messages({f"K{n:02}": "v" * 1000 for n in range(33)})
    assert total == (
        "environment='33099 bytes of names and values': at most 32768 bytes (32 KB) together "
        "(botocore ContainerDefinition.Environment): shorten or drop variables"
    )
    assert _messages({}) == [] and _messages(None) == []  # type: ignore[arg-type]
