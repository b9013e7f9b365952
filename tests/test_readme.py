"""The documentation's embedding samples (README.md and docs/*.md, chiefly docs/embedding.md)
run as written, type-check as an embedding app's would, and what they build passes cdk-nag."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template

from tests.support import ROOT, nag_findings

SAMPLE = re.compile(r"<!-- sample: (?P<name>[a-z-]+) -->\n```python\n(?P<code>.*?)```", re.S)


PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))


def readme_samples() -> dict[str, str]:
    """Every marked sample of the documentation, by name (a name is used once)."""
    samples: dict[str, str] = {}
    for page in PAGES:
        for match in SAMPLE.finditer(page.read_text()):
            assert match["name"] not in samples, (page.name, match["name"])
            samples[match["name"]] = match["code"]
    return samples


def run_sample(name: str) -> dict:
    """Execute the sample as a user would (it builds and synthesizes its own App) and
    return its namespace."""
    namespace: dict = {"__name__": f"readme_sample_{name}"}
    exec(compile(readme_samples()[name], f"docs:{name}", "exec"), namespace)
    return namespace


def test_the_docs_have_every_sample():
    assert set(readme_samples()) == {
        "training",
        "training-eks",
        "inference",
        "config",
        "imported-network",
        "grant-invoke",
        "alarms",
    }


@pytest.mark.slow
def test_samples_pass_mypy_strict_as_an_embedding_app(tmp_path, mypy_cache):
    package = tmp_path / "readme_samples"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, code in readme_samples().items():
        (package / f"{name.replace('-', '_')}.py").write_text(code)
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
            exec(compile(imports, f"docs:{name}", "exec"), {})


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
    assert names == {"MyModels-chat-7b-62e167c0", "MyModels-summarize-13b-62e167c0"}
    template.resource_count_is("AWS::ApplicationAutoScaling::ScalableTarget", 2)
    template.resource_count_is("AWS::CloudWatch::Alarm", 2)


@pytest.fixture(scope="module")
def imported_network_sample() -> dict:
    return run_sample("imported-network")


@pytest.fixture(scope="module")
def grant_invoke_sample() -> dict:
    return run_sample("grant-invoke")


@pytest.fixture(scope="module")
def alarms_sample() -> dict:
    return run_sample("alarms")


def _template(namespace: dict, stack_name: str) -> Template:
    return Template.from_json(namespace["app"].synth().get_stack_by_name(stack_name).template)


def test_imported_network_sample_creates_no_network_and_no_rule(imported_network_sample):
    template = _template(imported_network_sample, "ClusterInMyNetwork")
    for resource_type in (
        "AWS::EC2::VPC",
        "AWS::EC2::Subnet",
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::SecurityGroupIngress",
        "AWS::EC2::SecurityGroupEgress",
    ):
        template.resource_count_is(resource_type, 0)
    template.has_resource_properties(
        "AWS::FSx::FileSystem",
        {"SubnetIds": ["subnet-0123456789abcdef0"], "SecurityGroupIds": ["sg-0123456789abcdef0"]},
    )
    template.has_resource_properties(
        "AWS::SageMaker::Cluster",
        {
            "VpcConfig": {
                "SecurityGroupIds": ["sg-0123456789abcdef0"],
                "Subnets": ["subnet-0123456789abcdef0"],
            }
        },
    )


def test_a_mutable_imported_group_gets_only_the_lustre_rule(imported_network_sample):
    code = readme_samples()["imported-network"].replace("mutable=False", "mutable=True")
    namespace: dict = {"__name__": "readme_sample_mutable"}
    exec(compile(code, "docs:imported-network (mutable)", "exec"), namespace)
    template = _template(namespace, "ClusterInMyNetwork")
    (rule,) = template.find_resources("AWS::EC2::SecurityGroupIngress").values()
    assert {
        key: rule["Properties"][key]
        for key in ("IpProtocol", "FromPort", "ToPort", "GroupId", "SourceSecurityGroupId")
    } == {
        "IpProtocol": "tcp",
        "FromPort": 988,
        "ToPort": 1023,
        "GroupId": "sg-0123456789abcdef0",
        "SourceSecurityGroupId": "sg-0123456789abcdef0",
    }


def test_grant_invoke_sample_lets_the_function_invoke_only_that_endpoint(grant_invoke_sample):
    template = _template(grant_invoke_sample, "ChatApi")
    (endpoint_id,) = template.find_resources("AWS::SageMaker::Endpoint")
    policies = template.find_resources(
        "AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": Match.string_like_regexp("^Ask")}]}}
    )
    ((_, policy),) = policies.items()
    assert policy["Properties"]["PolicyDocument"]["Statement"] == [
        {
            "Action": ["sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointWithResponseStream"],
            "Effect": "Allow",
            "Resource": {"Ref": endpoint_id},
        }
    ]
    # The constructs alone: no topic, and no alarm (no model scales to zero here).
    template.resource_count_is("AWS::SNS::Topic", 0)
    template.resource_count_is("AWS::CloudWatch::Alarm", 0)


def test_alarms_sample_sends_both_alarms_to_its_encrypted_topic(alarms_sample):
    template = _template(alarms_sample, "WatchedModels")
    (topic_id,) = template.find_resources(
        "AWS::SNS::Topic", {"Properties": {"KmsMasterKeyId": Match.any_value()}}
    )
    alarms = template.find_resources("AWS::CloudWatch::Alarm")
    assert sorted(a["Properties"]["AlarmName"] for a in alarms.values()) == [
        "WatchedModels-chat-8b-62e167c0-health",
        "WatchedModels-chat-health",
    ]
    for alarm in alarms.values():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]
    template.has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "ml-oncall@example.com"}
    )


@pytest.mark.parametrize(
    ("sample", "stack_class"),
    [
        ("training", "MyTrainingStack"),
        ("inference", "MyModelsStack"),
        ("imported_network", "ClusterInMyNetworkStack"),
        ("grant_invoke", "ChatApiStack"),
        ("alarms", "WatchedModelsStack"),
    ],
)
def test_sample_stacks_pass_the_compliance_packs_in_a_bare_app(sample, stack_class, request):
    namespace = request.getfixturevalue(f"{sample}_sample")
    app = cdk.App()  # no cdk.json, no feature flags: what an embedding app may have
    namespace[stack_class](app, "Checked")
    assert nag_findings(app) == []


def test_eks_training_sample_builds_the_eks_and_data_stacks_and_passes_the_packs():
    namespace = run_sample("training-eks")
    assembly = namespace["app"].synth()
    assert sorted(stack.stack_name for stack in assembly.stacks) == [
        "MyTraining",
        "MyTrainingData",
    ]
    template = Template.from_json(assembly.get_stack_by_name("MyTraining").template)
    (cluster,) = template.find_resources("AWS::SageMaker::Cluster").values()
    assert "Eks" in cluster["Properties"]["Orchestrator"]
    assert len(template.find_resources("AWS::SageMaker::ComputeQuota")) == 1
    app = cdk.App()  # no cdk.json, no feature flags: what an embedding app may have
    namespace["TrainingEksStack"](app, "Checked", config=namespace["training"])
    assert nag_findings(app) == []


def test_config_sample_builds_its_one_endpoint_from_a_configuration_in_code():
    namespace = run_sample("config")
    assembly = namespace["app"].synth()
    assert [stack.stack_name for stack in assembly.stacks] == [
        "FmpInferenceArtifacts",
        "FmpInference",
    ]
    template = Template.from_json(assembly.get_stack_by_name("FmpInference").template)
    # An InferenceConfig holds only what it is given: one endpoint, no demo beside it.
    (endpoint,) = template.find_resources("AWS::SageMaker::Endpoint").values()
    assert endpoint["Properties"]["EndpointConfigName"]["Fn::GetAtt"][0].startswith(
        "IcEndpointchatEndpointConfig"
    )
    (component,) = template.find_resources("AWS::SageMaker::InferenceComponent").values()
    assert component["Properties"]["InferenceComponentName"] == "FmpInference-chat-8b-007b1363"
