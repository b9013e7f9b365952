"""The package's extract of botocore's SageMaker model matches the pinned botocore."""

from __future__ import annotations

import subprocess
import sys

import botocore.session
import pytest

from fm_platform.rules.sagemaker_model import (
    SHAPES_FILE,
    ShapeRule,
    member_shape_name,
    shape_rule,
)
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from regenerate_sagemaker_shapes import current, render  # noqa: E402


def test_the_shipped_extract_is_what_the_pinned_botocore_declares():
    header, shapes = current()
    assert SHAPES_FILE.read_text() == render(header, shapes), (
        "fm_platform/rules/data/sagemaker_shapes.json differs from the installed botocore's "
        "SageMaker model: run python scripts/regenerate_sagemaker_shapes.py"
    )


def test_rules_read_from_the_extract_match_botocore_for_names_enums_and_members():
    model = botocore.session.get_session().get_service_model("sagemaker")
    for name in ("EndpointName", "ClusterName", "ProductionVariantInstanceType", "Url"):
        meta = model.shape_for(name).metadata
        rule = shape_rule(name)
        assert (rule.enum, rule.min, rule.max, rule.pattern) == (
            tuple(meta.get("enum", ())),
            meta.get("min"),
            meta.get("max"),
            meta.get("pattern"),
        )
    assert member_shape_name("InstancePool", "ModelNameOverride") == (
        model.shape_for("InstancePool").members["ModelNameOverride"].name
    )


def test_an_unknown_shape_or_member_is_named_in_the_error():
    with pytest.raises(KeyError, match="no shape 'EndpointNam'"):
        shape_rule("EndpointNam")
    with pytest.raises(KeyError, match="InstancePool has no member 'Priorty'"):
        member_shape_name("InstancePool", "Priorty")


def test_planning_a_catalog_loads_no_aws_sdk_client_code(tmp_path):
    # botocore.exceptions (for error messages) is light; its sessions and clients are not.
    catalog = ROOT / "examples" / "catalog.yaml"
    script = (
        "import sys\n"
        "from fm_platform.cli.main import main\n"
        f"main(['plan', {str(catalog)!r}, '--plan-file', {str(tmp_path / 'p.json')!r}])\n"
        "sdk = ('boto3', 'botocore.session', 'botocore.client')\n"
        "loaded = sorted(m for m in sys.modules if m in sdk)\n"
        "print('LOADED', loaded)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert run.stdout.splitlines()[-1] == "LOADED []"


@pytest.mark.parametrize(
    ("rule", "allowed"),
    [
        (ShapeRule("OnlyMin", min=128), "at least 128"),
        (ShapeRule("OnlyMax", max=5, pattern="a"), "matching a; at most 5 characters"),
        (ShapeRule("Both", min=1, max=3), "1-3"),
    ],
)
def test_an_open_range_is_described_without_none(rule, allowed):
    assert rule.describe_allowed() == allowed
