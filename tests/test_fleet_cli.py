"""`fmp plan`: the table, the plan file, --repack, charts, errors without tracebacks."""

from __future__ import annotations

import json

import yaml

from fm_platform.cli.main import main


def write(tmp_path, models, name="cat.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"name": "demo", "models": models}))
    return path


MODELS = [
    {"name": "chat-8b", "params_b": 8.03},
    {"name": "chat-13b", "params_b": 13.0},
    {"name": "secure", "params_b": 8.03, "isolation": "dedicated", "isolation_reason": "PII"},
]


def test_plan_prints_the_table_and_writes_the_plan(tmp_path, capsys):
    catalog = write(tmp_path, MODELS)
    assert main(["plan", str(catalog), "--charts", str(tmp_path / "charts")]) == 0
    out = capsys.readouterr().out
    assert "sme-secure" in out and "single-model" in out and "inference-components" in out
    assert "one dedicated endpoint per model" in out
    plan = json.loads((tmp_path / "cat.plan.json").read_text())
    assert {p["name"] for p in plan["placements"]} == {"chat-8b", "chat-13b", "secure"}
    assert sorted(p.name for p in (tmp_path / "charts").iterdir()) == sorted(
        f"{e['name']}.png" for e in plan["endpoints"]
    )


def test_repack_prints_moves_and_writes_nothing_without_apply(tmp_path, capsys):
    catalog = write(tmp_path, MODELS[:1])
    main(["plan", str(catalog)])
    write(tmp_path, MODELS)
    main(["plan", str(catalog)])
    before = (tmp_path / "cat.plan.json").read_text()
    capsys.readouterr()
    assert main(["plan", str(catalog), "--repack"]) == 0
    out = capsys.readouterr().out
    assert "repacking moves" in out and "add --apply" in out
    assert (tmp_path / "cat.plan.json").read_text() == before


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


def test_a_changed_model_against_the_plan_file_is_reported(tmp_path, capsys):
    catalog = write(tmp_path, MODELS)
    main(["plan", str(catalog)])
    write(tmp_path, [{**MODELS[0], "params_b": 70.6}, *MODELS[1:]])
    capsys.readouterr()
    assert main(["plan", str(catalog)]) == 1
    assert "models[0].params_b=70.6: changed since the plan file (was 8.03)" in (
        capsys.readouterr().err
    )
