"""Names from stack outputs, `--help`, and the global options."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from typing import Any

import pytest

from fm_platform.cli import main as cli_main
from fm_platform.cli.errors import CliError
from fm_platform.cli.main import _named_group, build_parser, main
from fm_platform.cli.outputs import resolve_cluster, resolve_endpoint, stack_outputs
from tests.cli_support import CLUSTER_ARN, StubbedClients, hermetic_aws_env, stack_response


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)


def clients_with(stack: str, outputs: dict[str, str]) -> StubbedClients:
    clients = StubbedClients()
    clients.stub("cloudformation").add_response(
        "describe_stacks", stack_response(stack, outputs), {"StackName": stack}
    )
    return clients


def test_stack_outputs_maps_keys_to_values() -> None:
    clients = clients_with("S", {"A": "1", "B": "2"})
    assert stack_outputs(clients, "S") == {"A": "1", "B": "2"}
    clients.assert_done()


def test_resolve_cluster_reads_the_training_outputs() -> None:
    clients = clients_with(
        "Custom",
        {
            "ClusterName": "fmp-train",
            "ClusterArn": CLUSTER_ARN,
            "ControllerGroupName": "controller",
            "FsxMountPath": "/fsx",
        },
    )
    ref = resolve_cluster(clients, None, "Custom")
    assert (ref.name, ref.arn, ref.controller_group, ref.fsx_mount_path) == (
        "fmp-train",
        CLUSTER_ARN,
        "controller",
        "/fsx",
    )


def test_explicit_cluster_skips_cloudformation() -> None:
    ref = resolve_cluster(StubbedClients(), "mine", "FmpTraining")
    assert (ref.name, ref.arn, ref.controller_group) == ("mine", None, None)


def test_missing_cluster_output_names_key_and_option() -> None:
    clients = clients_with("FmpTraining", {"Other": "x"})
    with pytest.raises(
        CliError, match="stack FmpTraining has no output ClusterName: pass --cluster"
    ):
        resolve_cluster(clients, None, "FmpTraining")


def test_single_endpoint_is_the_default() -> None:
    assert (
        resolve_endpoint(
            clients_with("FmpInference", {"EndpointNames": " one "}), None, "FmpInference"
        )
        == "one"
    )


def test_empty_endpoint_list_asks_for_endpoint() -> None:
    clients = clients_with("FmpInference", {"EndpointNames": " , "})
    with pytest.raises(CliError, match="lists no endpoint in EndpointNames: pass --endpoint"):
        resolve_endpoint(clients, None, "FmpInference")


def test_stack_option_overrides_the_default_stack(capsys: Any) -> None:
    clients = clients_with("MyInference", {"EndpointNames": "a,b,c"})
    assert main(["endpoint", "status", "--stack", "MyInference"], clients=clients) == 1
    assert "stack MyInference has 3 endpoints (a, b, c)" in capsys.readouterr().err


def test_global_options_work_before_and_after_the_command() -> None:
    parser = build_parser()
    before = parser.parse_args(["--region", "eu-west-1", "cluster", "nodes", "--json"])
    after = parser.parse_args(["cluster", "nodes", "--region", "eu-west-1", "--json"])
    for args in (before, after):
        assert (args.region, args.json, args.profile) == ("eu-west-1", True, None)
    assert build_parser().parse_args(["cluster", "nodes"]).json is False


# Every command and action, and whether its output is data (so --json means something).
COMMANDS = {
    ("cluster", "status"): True,
    ("cluster", "nodes"): True,
    ("cluster", "connect"): False,
    ("endpoint", "status"): True,
    ("endpoint", "invoke"): False,
    ("job", "script"): False,
}


def help_text(argv: list[str], capsys: Any) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=" ".join)
def test_every_action_has_a_one_line_description_an_example_and_json_only_for_data(
    command: tuple[str, str], capsys: Any
) -> None:
    text = help_text(list(command), capsys)
    description = text.split("\n\n")[1]
    assert description.endswith(".") and description[0].isupper()
    assert f"example:\n  fmp {' '.join(command)}" in text
    assert ("--json" in text) is COMMANDS[command]


@pytest.mark.parametrize("group", ["cluster", "endpoint", "job"])
def test_every_command_group_has_a_description_and_an_example(group: str, capsys: Any) -> None:
    text = help_text([group], capsys)
    assert f"example:\n  fmp {group} " in text
    assert text.split("\n\n")[1].endswith(".")


def test_json_is_refused_where_the_output_is_not_data(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["cluster", "connect", "--json"])
    assert exit_info.value.code == 2
    assert "unrecognized arguments: --json" in capsys.readouterr().err


def test_only_the_named_command_group_is_built() -> None:
    assert _named_group(["--region", "eu-west-1", "plan", "catalog.yaml"]) == "plan"
    assert _named_group(["fleet", "status", "p.json", "--profile", "x"]) == "fleet"
    assert _named_group(["--help"]) is None and _named_group(["plam"]) is None
    only = build_parser("plan")
    assert only.parse_args(["plan", "catalog.yaml"]).catalog == "catalog.yaml"
    with pytest.raises(SystemExit):
        only.parse_args(["cluster", "nodes"])


def test_version(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"fmp {metadata.version('fm-platform')}"


def test_help_runs_as_a_module() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fm_platform.cli.main", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith("usage: fmp")
    for command in ("cluster", "job", "endpoint"):
        assert command in result.stdout


def test_help_from_the_entry_point(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["endpoint", "invoke", "--help"])
    assert exit_info.value.code == 0
    assert "--stream" in capsys.readouterr().out


def test_stubbed_clients_reject_unstubbed_services() -> None:
    with pytest.raises(KeyError):
        StubbedClients().client("sagemaker")


def test_the_console_script_exits_with_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_main, "main", lambda: 3)
    with pytest.raises(SystemExit) as exited:
        cli_main.console()
    assert exited.value.code == 3
