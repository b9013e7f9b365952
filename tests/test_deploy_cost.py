"""`make deploy`'s cost and confirmation (scripts/deploy_cost.py): the default stacks' cost
per hour and per day from the shipped prices, and no deploy without approval."""

from __future__ import annotations

import argparse
import io
import json
import sys

import pytest

from fm_platform.config import AppConfig, load_config
from fm_platform.hardware.prices import hourly_prices, price_regions
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from deploy_cost import config_path, confirm, region_for, report, running_instances  # noqa: E402


def test_the_default_stacks_cost_is_the_sum_of_their_instances():
    config = AppConfig()
    prices = hourly_prices("us-east-1")
    lines = running_instances(config)
    expected = sum(prices[line.instance_type] * line.count for line in lines)
    # The training cluster's four ml.trn1.32xlarge are the bulk of it.
    workers = next(line for line in lines if line.what == "instance group workers")
    assert (workers.instance_type, workers.count) == ("ml.trn1.32xlarge", 4)
    assert prices["ml.trn1.32xlarge"] * 4 > expected / 2
    text = report(config, "us-east-1")
    assert f"  total: ${expected:,.2f} per hour, ${expected * 24:,.2f} per day" in text
    assert region_for(config, None) == "us-east-1"


def test_a_type_without_a_price_is_named_not_counted():
    region = next(r for r in price_regions() if "ml.trn1.32xlarge" not in hourly_prices(r))
    text = report(AppConfig(), region)
    assert any("4 x ml.trn1.32xlarge" in line and line.endswith("no price") for line in text)
    assert "for the priced instances" in text[-4]
    assert text[-3].startswith("  not counted: ") and "ml.trn1.32xlarge (no price" in text[-3]
    assert "the shipped data has no HyperPod prices" in text[-1]


def _args(yes: bool = False) -> argparse.Namespace:
    return argparse.Namespace(yes=yes)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_deploy_waits_for_a_yes_and_never_hangs_without_a_terminal(monkeypatch, capsys):
    monkeypatch.delenv("CI", raising=False)
    assert confirm(_args(), [], stdin=_Terminal("y\n")) == 0
    assert confirm(_args(), [], stdin=_Terminal("\n")) == 1
    assert confirm(_args(yes=True), [], stdin=io.StringIO("")) == 0
    assert confirm(_args(), ["--require-approval", "never"], stdin=io.StringIO("")) == 0
    assert confirm(_args(), [], stdin=io.StringIO("")) == 1  # no terminal: stop, do not wait
    assert "make deploy YES=1" in capsys.readouterr().err
    monkeypatch.setenv("CI", "true")
    assert confirm(_args(), [], stdin=_Terminal("y\n")) == 1


@pytest.mark.parametrize(
    ("args", "name"),
    [(["-c", "config=other.json"], "other.json"), (["--context=config=x.json"], "x.json")],
)
def test_the_configuration_file_is_the_one_the_cdk_arguments_name(args, name):
    assert config_path(args) == type(config_path(args))(name)
    assert config_path([]).name == "fmp-config.json"


def test_an_eks_cluster_counts_its_groups_and_states_the_control_plane():
    data = json.loads((ROOT / "examples" / "training-eks.json").read_text())
    config = load_config(data)
    lines = running_instances(config)
    assert [(line.what, line.instance_type, line.count) for line in lines] == [
        ("instance group system", "ml.m5.2xlarge", 1),
        ("instance group gpu-p5", "ml.p5.48xlarge", 2),
        ("instance group gpu-g5", "ml.g5.12xlarge", 2),
    ]
    assert any(
        "plus the EKS control plane: $0.10 per hour" in line for line in report(config, "us-east-1")
    )
    assert any(
        "plus the Helm release builds: $0.005 per build minute" in line
        for line in report(config, "us-east-1")
    )
