"""The README's embedding samples run as written, and what they build passes cdk-nag."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from tests.support import ROOT, nag_findings

SAMPLE = re.compile(r"<!-- sample: (?P<name>[a-z-]+) -->\n```python\n(?P<code>.*?)```", re.S)


def readme_samples() -> dict[str, str]:
    text = (ROOT / "README.md").read_text()
    return {match["name"]: match["code"] for match in SAMPLE.finditer(text)}


def run_sample(name: str) -> dict:
    """Execute the sample as a user would (it builds and synthesizes its own App) and
    return its namespace."""
    namespace: dict = {"__name__": f"readme_sample_{name}"}
    exec(compile(readme_samples()[name], f"README.md:{name}", "exec"), namespace)
    return namespace


def test_readme_has_the_three_samples():
    assert set(readme_samples()) == {"training", "inference", "config"}


@pytest.mark.slow
def test_samples_pass_mypy_strict_as_an_embedding_app(tmp_path, mypy_cache):
    package = tmp_path / "readme_samples"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, code in readme_samples().items():
        (package / f"{name}.py").write_text(code)
    # The project's mypy settings (pyproject.toml gives readme_samples.* the --strict flags)
    # and its cache, so that the libraries `make lint` analysed are not analysed again.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(mypy_cache),
            *(str(path) for path in sorted(package.glob("*.py"))),
        ],
        cwd=tmp_path,
        # The package as an installed wheel provides it (py.typed); an editable install's
        # import hook is invisible to mypy.
        env={**os.environ, "MYPYPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_samples_import_no_deprecated_name():
    for name, code in readme_samples().items():
        imports = "\n".join(_import_block(code))
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            exec(compile(imports, f"README.md:{name}", "exec"), {})


def _import_block(code: str) -> list[str]:
    """The sample's import statements, to run alone."""
    lines, inside = [], False
    for line in code.splitlines():
        if line.startswith(("import ", "from ")):
            inside = line.rstrip().endswith("(")
            lines.append(line)
        elif inside:
            lines.append(line)
            inside = not line.startswith(")")
    return lines


@pytest.fixture(scope="module")
def training_sample() -> dict:
    return run_sample("training")


@pytest.fixture(scope="module")
def inference_sample() -> dict:
    return run_sample("inference")


def test_training_sample_builds_a_cluster_with_a_controller_and_h100_workers(training_sample):
    template = Template.from_json(
        training_sample["app"].synth().get_stack_by_name("MyTraining").template
    )
    (cluster,) = template.find_resources("AWS::SageMaker::Cluster").values()
    groups = {
        g["InstanceGroupName"]: g["InstanceType"] for g in cluster["Properties"]["InstanceGroups"]
    }
    assert groups == {"head": "ml.m5.12xlarge", "gpu": "ml.p5.48xlarge"}
    template.has_resource_properties("AWS::EC2::Subnet", {"AvailabilityZoneId": "usw2-az2"})


def test_inference_sample_builds_an_endpoint_with_two_scaled_models(inference_sample):
    template = Template.from_json(
        inference_sample["app"].synth().get_stack_by_name("MyModels").template
    )
    template.resource_count_is("AWS::SageMaker::Endpoint", 1)
    names = {
        c["Properties"]["InferenceComponentName"]
        for c in template.find_resources("AWS::SageMaker::InferenceComponent").values()
    }
    assert names == {"MyModels-chat-7b", "MyModels-summarize-13b"}
    template.resource_count_is("AWS::ApplicationAutoScaling::ScalableTarget", 2)
    template.resource_count_is("AWS::CloudWatch::Alarm", 2)


@pytest.mark.parametrize(
    ("sample", "stack_class"), [("training", "MyTrainingStack"), ("inference", "MyModelsStack")]
)
def test_sample_stacks_pass_the_compliance_packs_in_a_bare_app(sample, stack_class, request):
    namespace = request.getfixturevalue(f"{sample}_sample")
    app = cdk.App()  # no cdk.json, no feature flags: what an embedding app may have
    namespace[stack_class](app, "Checked")
    assert nag_findings(app) == []


def test_config_sample_builds_its_one_endpoint_from_a_configuration_in_code():
    namespace = run_sample("config")
    assembly = namespace["app"].synth()
    assert [stack.stack_name for stack in assembly.stacks] == [
        "FmpInferenceArtifacts",
        "FmpInference",
    ]
    template = Template.from_json(assembly.get_stack_by_name("FmpInference").template)
    (component,) = template.find_resources("AWS::SageMaker::InferenceComponent").values()
    assert component["Properties"]["InferenceComponentName"] == "FmpInference-chat-8b"
