"""`fmp endpoint scale` against stubbed SageMaker: copies of a model, instances of a variant."""

from __future__ import annotations

from typing import Any

import pytest

from fm_platform.cli.components import resolve_component
from fm_platform.cli.errors import CliError
from tests.cli_support import LAUNCHED, StubbedClients, hermetic_aws_env, run
from tests.test_cli_endpoint import ENDPOINT_ARN, described, summary

COMPONENTS = ["FmpInference-llama-7b-chat", "FmpInference-flan-t5", "FmpInferen-1a2b3c4d-mistral"]


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)


def stub_components(clients: StubbedClients, names: list[str]) -> None:
    clients.stub("sagemaker").add_response(
        "list_inference_components",
        {"InferenceComponents": [summary(name) for name in names]},
        {"EndpointNameEquals": "shared-g5"},
    )


def stub_copies_update(clients: StubbedClients, component: str, copies: int) -> None:
    sagemaker = clients.stub("sagemaker")
    sagemaker.add_response(
        "describe_inference_component",
        described(component, "InService", 1, 1),
        {"InferenceComponentName": component},
    )
    sagemaker.add_response(
        "update_inference_component_runtime_config",
        {"InferenceComponentArn": f"{ENDPOINT_ARN}/{component}"},
        {"InferenceComponentName": component, "DesiredRuntimeConfig": {"CopyCount": copies}},
    )


@pytest.mark.parametrize(
    ("model", "component"),
    [
        ("llama-7b-chat", "FmpInference-llama-7b-chat"),  # <stack>-<model>
        ("FmpInference-flan-t5", "FmpInference-flan-t5"),  # the component name itself
        ("mistral", "FmpInferen-1a2b3c4d-mistral"),  # a name shortened with a hash
    ],
)
def test_scale_copies_of_a_model(model: str, component: str, capsys: Any) -> None:
    clients = StubbedClients()
    stub_components(clients, COMPONENTS)
    stub_copies_update(clients, component, 4)
    argv = ["endpoint", "scale", "shared-g5", "--model", model, "--copies", "4"]
    code, out, err = run(argv, clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    assert out == (
        f"{component} on shared-g5: desired copies 1 -> 4 "
        "(requested; follow with `fmp endpoint status shared-g5`)\n"
    )


def test_scale_to_zero_copies_is_allowed(capsys: Any) -> None:
    clients = StubbedClients()
    stub_components(clients, COMPONENTS)
    stub_copies_update(clients, "FmpInference-flan-t5", 0)
    argv = ["endpoint", "scale", "shared-g5", "--model", "flan-t5", "--copies", "0"]
    code, _, err = run(argv, clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()


def test_stack_named_component_wins_over_other_suffix_matches() -> None:
    names = ["FmpInference-chat", "FmpInference-llama-chat"]
    assert resolve_component(names, "chat", "FmpInference", "e") == "FmpInference-chat"
    with pytest.raises(CliError, match=r"model chat matches 2 inference components on endpoint e"):
        resolve_component(names, "chat", "Other", "e")


def test_unknown_model_lists_the_components(capsys: Any) -> None:
    clients = StubbedClients()
    stub_components(clients, COMPONENTS[:2])
    argv = ["endpoint", "scale", "shared-g5", "--model", "gpt-j", "--copies", "2"]
    code, out, err = run(argv, clients, capsys)
    assert (code, out) == (1, "")
    assert err == (
        "fmp: error: no inference component for model gpt-j on endpoint shared-g5 (its "
        "components: FmpInference-flan-t5, FmpInference-llama-7b-chat): pass a model name or a "
        "component name\n"
    )


def test_copies_on_an_endpoint_without_components(capsys: Any) -> None:
    clients = StubbedClients()
    stub_components(clients, [])
    argv = ["endpoint", "scale", "shared-g5", "--model", "m", "--copies", "2"]
    code, _, err = run(argv, clients, capsys)
    assert code == 1
    assert "has no inference components: scale its instances with --instances N" in err


def describe_endpoint(clients: StubbedClients, variants: dict[str, int]) -> None:
    clients.stub("sagemaker").add_response(
        "describe_endpoint",
        {
            "EndpointName": "shared-g5",
            "EndpointArn": ENDPOINT_ARN,
            "EndpointStatus": "InService",
            "CreationTime": LAUNCHED,
            "LastModifiedTime": LAUNCHED,
            "ProductionVariants": [
                {"VariantName": name, "CurrentInstanceCount": n, "DesiredInstanceCount": n}
                for name, n in variants.items()
            ],
        },
        {"EndpointName": "shared-g5"},
    )


def stub_instances_update(clients: StubbedClients, variant: str, instances: int) -> None:
    clients.stub("sagemaker").add_response(
        "update_endpoint_weights_and_capacities",
        {"EndpointArn": ENDPOINT_ARN},
        {
            "EndpointName": "shared-g5",
            "DesiredWeightsAndCapacities": [
                {"VariantName": variant, "DesiredInstanceCount": instances}
            ],
        },
    )


def test_scale_instances_of_the_only_variant(capsys: Any) -> None:
    clients = StubbedClients()
    describe_endpoint(clients, {"AllTraffic": 1})
    stub_instances_update(clients, "AllTraffic", 3)
    code, out, err = run(["endpoint", "scale", "shared-g5", "--instances", "3"], clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    assert out.startswith("variant AllTraffic of shared-g5: desired instances 1 -> 3 (requested")


def test_scale_instances_of_a_named_variant(capsys: Any) -> None:
    clients = StubbedClients()
    describe_endpoint(clients, {"blue": 2, "green": 1})
    stub_instances_update(clients, "green", 2)
    argv = ["endpoint", "scale", "shared-g5", "--instances", "2", "--variant", "green"]
    code, out, err = run(argv, clients, capsys)
    assert (code, err) == (0, "")
    clients.assert_done()
    assert out.startswith("variant green of shared-g5: desired instances 1 -> 2")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "endpoint shared-g5 has 2 variants (blue, green): choose one with --variant NAME"),
        (["--variant", "red"], "endpoint shared-g5 has no variant red (its variants: blue, green)"),
    ],
)
def test_variant_must_be_chosen_among_the_endpoints(
    extra: list[str], message: str, capsys: Any
) -> None:
    clients = StubbedClients()
    describe_endpoint(clients, {"blue": 2, "green": 1})
    code, _, err = run(
        ["endpoint", "scale", "shared-g5", "--instances", "2", *extra], clients, capsys
    )
    assert (code, err) == (1, f"fmp: error: {message}\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--model", "m", "--copies", "-1"],
            "--copies -1: below the minimum 0 "
            "(UpdateInferenceComponentRuntimeConfig DesiredRuntimeConfig.CopyCount)",
        ),
        (
            ["--instances", "-2", "--variant", "bad_name"],
            "--instances -2: below the minimum 0 (UpdateEndpointWeightsAndCapacities "
            "DesiredWeightsAndCapacities.DesiredInstanceCount); --variant bad_name: does not "
            "match [a-zA-Z0-9](-*[a-zA-Z0-9]){0,62} (UpdateEndpointWeightsAndCapacities "
            "DesiredWeightsAndCapacities.VariantName)",
        ),
        (["--copies", "2"], "--copies needs --model NAME (the model or inference component)"),
        (["--model", "m", "--instances", "2"], "--model goes with --copies"),
        (["--model", "m", "--copies", "2", "--variant", "v"], "--variant goes with --instances"),
    ],
)
def test_bad_requests_are_refused_before_any_call(
    argv: list[str], message: str, capsys: Any
) -> None:
    clients = StubbedClients()  # no service stubbed: any AWS call would raise KeyError
    code, out, err = run(["endpoint", "scale", "shared-g5", *argv], clients, capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"fmp: error: {message}")
    assert err.count("\n") == 1


def test_copies_and_instances_are_exclusive(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        argv = ["endpoint", "scale", "e", "--model", "m", "--copies", "1", "--instances", "1"]
        run(argv, StubbedClients(), capsys)
    assert exit_info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_endpoint_given_twice_must_agree(capsys: Any) -> None:
    argv = ["endpoint", "scale", "a", "--endpoint", "b", "--instances", "1"]
    code, _, err = run(argv, StubbedClients(), capsys)
    assert (code, err) == (1, "fmp: error: two endpoints given (a and --endpoint b): name one\n")
