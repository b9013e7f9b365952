"""`fmp plan`: tables with reasons, the plan file, changes, --explain, --region, --repack,
charts (and without matplotlib), errors without tracebacks."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest
import yaml

from fm_platform.cli.main import main
from tests.support import ROOT


@pytest.fixture(autouse=True)
def no_ambient_region(monkeypatch, tmp_path):
    """No region from the machine running the tests: none in the environment, no AWS
    config file."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))


def write(tmp_path, models, name="cat.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"name": "demo", "models": models}))
    return path


MODELS = [
    {"name": "chat-8b", "architecture": "llama-3.1-8b", "peak_rpm": 120},
    {"name": "chat-13b", "architecture": "llama-2-13b", "peak_rpm": 60},
    {
        "name": "secure",
        "architecture": "llama-3.1-8b",
        "peak_rpm": 60,
        "isolation": "dedicated",
        "isolation_reason": "PII",
    },
]


def test_plan_prints_reasons_costs_and_region_and_writes_plan_and_charts(tmp_path, capsys):
    catalog = write(tmp_path, MODELS)
    assert main(["plan", str(catalog), "--charts", str(tmp_path / "charts")]) == 0
    out = capsys.readouterr().out
    assert "reason" in out.splitlines()[0] and "the only option (inference-components" in out
    assert "sme-secure" in out and "$/h min / expected / max" in out
    assert "prices for us-east-1 (flexera-aws-sagemaker-pricing" in out
    assert "lower bound on the expected cost of any plan of this catalog (LP relaxation" in out
    plan = json.loads((tmp_path / "cat.plan.json").read_text())
    assert {p["name"] for p in plan["placements"]} == {"chat-8b", "chat-13b", "secure"}
    assert all(p["reason"] for p in plan["placements"]) and plan["region"] == "us-east-1"
    assert sorted(p.name for p in (tmp_path / "charts").iterdir()) == sorted(
        ["overview.png", *(f"{e['name']}.png" for e in plan["endpoints"])]
    )


def test_region_picks_the_prices_and_the_plan_keeps_it(tmp_path, capsys):
    catalog = write(tmp_path, MODELS)
    assert main(["plan", str(catalog), "--region", "eu-west-1"]) == 0
    assert "prices for eu-west-1" in capsys.readouterr().out
    assert main(["plan", str(catalog)]) == 0
    assert "prices for eu-west-1" in capsys.readouterr().out


def test_aws_region_picks_the_region_and_the_output_names_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    catalog = write(tmp_path, MODELS)
    assert main(["plan", str(catalog)]) == 0
    out = capsys.readouterr().out
    assert "prices for eu-west-1" in out
    assert f"planned for eu-west-1 (from AWS_REGION); plan written to {tmp_path}" in out
    assert json.loads((tmp_path / "cat.plan.json").read_text())["region"] == "eu-west-1"


def test_aws_default_region_then_the_profile_then_us_east_1(tmp_path, capsys, monkeypatch):
    config = tmp_path / "aws-config"
    config.write_text("[default]\nregion = eu-central-1\n[profile dev]\nregion = us-west-2\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    catalog = write(tmp_path, MODELS)
    cases = [
        ({"AWS_DEFAULT_REGION": "eu-west-1"}, [], "eu-west-1 (from AWS_DEFAULT_REGION)"),
        ({}, ["--profile", "dev"], f"us-west-2 (from profile dev in {config})"),
        ({"AWS_PROFILE": "dev"}, [], f"us-west-2 (from profile dev in {config})"),
        ({}, [], f"eu-central-1 (from profile default in {config})"),
    ]
    for environ, flags, said in cases:
        (tmp_path / "cat.plan.json").unlink(missing_ok=True)
        with monkeypatch.context() as env:
            for name, value in environ.items():
                env.setenv(name, value)
            assert main(["plan", str(catalog), *flags]) == 0
        out = capsys.readouterr().out
        assert f"planned for {said}" in out, said
        assert f"prices for {said.split()[0]}" in out
    config.unlink()
    (tmp_path / "cat.plan.json").unlink()
    assert main(["plan", str(catalog)]) == 0
    assert "planned for us-east-1 (from the default: no region set)" in capsys.readouterr().out


def test_a_plan_keeps_its_region_and_says_which_region_the_environment_names(
    tmp_path, capsys, monkeypatch
):
    catalog = write(tmp_path, MODELS)
    assert main(["plan", str(catalog), "--region", "eu-west-1"]) == 0
    assert "planned for eu-west-1 (from --region)" in capsys.readouterr().out
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    assert main(["plan", str(catalog)]) == 0
    captured = capsys.readouterr()
    assert "planned for eu-west-1 (from the plan file)" in captured.out
    assert (
        "warning: planning for eu-west-1, the plan file's region; AWS_REGION names us-east-1: "
        "pass --region us-east-1 to re-plan the catalog for it"
    ) in captured.err
    assert main(["plan", str(catalog), "--region", "us-east-1"]) == 0
    captured = capsys.readouterr()
    assert "planned for us-east-1 (from --region)" in captured.out
    assert captured.err == (
        "warning: the plan moves from eu-west-1 to us-east-1: its stacks deploy to us-east-1; "
        "those deployed in eu-west-1 stay until you destroy them\n"
    )
    assert json.loads((tmp_path / "cat.plan.json").read_text())["region"] == "us-east-1"


def test_the_help_gives_the_order_the_region_is_taken_in(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        "The region is --region, else the plan file's region (a plan keeps its region until "
        "--region moves it), else AWS_REGION, else AWS_DEFAULT_REGION, else the region of the "
        "profile (--profile, else AWS_PROFILE, else default) in the AWS config file, else "
        "us-east-1."
    ) in help_text


def test_explain_prints_scores_candidates_and_rejections(tmp_path, capsys):
    catalog = write(tmp_path, MODELS)
    assert main(["plan", str(catalog), "--explain", "chat-8b"]) == 0
    out = capsys.readouterr().out
    for text in (
        "chat-8b: ",
        "kv_cache=128 KiB/token",
        "context_tokens=8192 (default)",
        "scores (x weight): model_size",
        "candidates:",
        "  single-model: ",
        "rejected types",
        "text generation is not served on CPU types",
        "has no bf16",
        "planned for us-east-1 (from the default: no region set)",
    ):
        assert text in out, text
    assert not (tmp_path / "cat.plan.json").exists()
    assert main(["plan", str(catalog), "--explain", "nope"]) == 1
    assert "--explain 'nope': no such model" in capsys.readouterr().err


def test_a_replan_prints_what_changed(tmp_path, capsys):
    catalog = write(tmp_path, MODELS)
    main(["plan", str(catalog)])
    write(tmp_path, [{**MODELS[0], "peak_rpm": 3000}, *MODELS[1:]])
    capsys.readouterr()
    assert main(["plan", str(catalog)]) == 0
    out = capsys.readouterr().out
    assert "changes since the plan file:" in out and "resized chat-8b: 1-" in out
    assert "expected cost: $" in out


def test_repack_prints_moves_and_writes_nothing_without_apply(tmp_path, capsys):
    catalog = write(tmp_path, MODELS[:1])
    main(["plan", str(catalog)])
    write(tmp_path, MODELS)
    main(["plan", str(catalog)])
    before = (tmp_path / "cat.plan.json").read_text()
    capsys.readouterr()
    assert main(["plan", str(catalog), "--repack", "--min-saving", "10"]) == 0
    out = capsys.readouterr().out
    assert "repacking moves" in out and "at least $10 a month" in out and "add --apply" in out
    assert (tmp_path / "cat.plan.json").read_text() == before


def test_charts_without_matplotlib_name_the_extra_and_write_nothing(tmp_path):
    catalog = write(tmp_path, MODELS)
    code = (
        "import sys; sys.modules['matplotlib'] = None; from fm_platform.cli.main import main; "
        f"sys.exit(main(['plan', {str(catalog)!r}, '--charts', {str(tmp_path / 'c')!r}]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if not line.startswith("b'")]
    assert errors == ["fmp: error: --charts needs matplotlib: pip install 'fm-platform[charts]'"]
    assert not (tmp_path / "cat.plan.json").exists() and not (tmp_path / "c").exists()


def test_help_points_to_the_catalog_reference(capsys):
    with contextlib.suppress(SystemExit):
        main(["plan", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "docs/planner.md, section 'Catalog fields'" in out and "--min-saving" in out
    assert "\n## Catalog fields\n" in (ROOT / "docs" / "planner.md").read_text()


def test_bad_catalog_is_one_message_without_traceback(tmp_path, capsys):
    catalog = write(tmp_path, [{"name": "a", "params_b": 0}, {"name": "a", "params_b": 1}])
    assert main(["plan", str(catalog)]) == 1
    err = capsys.readouterr().err
    assert "models[0].params_b=0: must be > 0" in err
    assert "models[].name='a': must be unique" in err
    assert "Traceback" not in err


def test_a_corrupt_plan_file_is_reported(tmp_path, capsys):
    catalog = write(tmp_path, MODELS)
    (tmp_path / "cat.plan.json").write_text("{}")
    assert main(["plan", str(catalog)]) == 1
    assert "is not a fleet plan file" in capsys.readouterr().err


def test_unreadable_or_malformed_catalogs_are_one_line_each(tmp_path, capsys):
    assert main(["plan", str(tmp_path / "missing.yaml")]) == 1
    assert "cannot read catalog" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text("models: [\n")
    assert main(["plan", str(broken)]) == 1
    err = capsys.readouterr().err
    assert "is not valid yaml" in err and "Traceback" not in err


def test_explain_takes_an_adapter_and_explains_its_base(tmp_path, capsys):
    catalog = ROOT / "examples" / "platform-team.yaml"
    plan_file = tmp_path / "platform-team.plan.json"
    plan_file.write_text((ROOT / "examples" / "platform-team.plan.json").read_text())
    assert (
        main(["plan", str(catalog), "--plan-file", str(plan_file), "--explain", "acme-support"])
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "acme-support: a LoRA adapter served on chat-base-7b's copies (no compute of its own; "
        "chat-base-7b is sized for its adapters' traffic); what follows is chat-base-7b's"
    )
    assert out[1].startswith("chat-base-7b: ")
