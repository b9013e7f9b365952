"""`fmp plan`: tables with reasons, the plan file, changes, --explain, --region, --repack,
charts (and without matplotlib), errors without tracebacks."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import yaml

from fm_platform.cli.main import main
from tests.support import ROOT


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
