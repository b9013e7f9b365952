"""The README's embedding samples run as written, and what they build passes cdk-nag."""

from __future__ import annotations

import re

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
    assert [stack.stack_name for stack in assembly.stacks] == ["FmpInference"]
    template = Template.from_json(assembly.get_stack_by_name("FmpInference").template)
    (component,) = template.find_resources("AWS::SageMaker::InferenceComponent").values()
    assert component["Properties"]["InferenceComponentName"] == "FmpInference-chat-8b"
