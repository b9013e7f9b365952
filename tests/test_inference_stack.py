"""The inference stack: the seed's three hosting options, its config, outputs and IDs."""

from __future__ import annotations

import dataclasses
import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk.assertions import Match, Template

from fm_platform.config import (
    InferenceComponentEndpointConfig,
    InferenceComponentModelConfig,
    InferenceConfig,
    MultiModelEndpointConfig,
    SingleModelEndpointConfig,
)
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.inference_component import InferenceComponentModelOptions
from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.single_model_endpoint import DataCaptureOptions
from fm_platform.stacks.inference import InferenceStack
from tests.support import fixture_config, new_app

#: The demo fleet fmp-config.json ships, as the tests' configuration holds it.
DEMO = fixture_config().inference


class Built:
    """The default stack's template from the session's CLI synth (cfn-lint and cdk-nag run
    on it in test_app), and the same stack built in-process, unsynthesized, to map
    constructs to logical IDs."""

    def __init__(self, assembly) -> None:
        self.stack = InferenceStack(new_app(), "FmpInference", config=DEMO)
        self.json = assembly.templates["FmpInference"]
        self.template = Template.from_json(self.json)

    def logical_id(self, construct) -> str:
        return self.stack.get_logical_id(construct.node.default_child or construct)

    def properties(self, construct) -> dict:
        return self.json["Resources"][self.logical_id(construct)]["Properties"]


@pytest.fixture(scope="module")
def built(default_assembly) -> Built:
    return Built(default_assembly)


def endpoint_name_of(built: Built, endpoint) -> dict:
    return {"Fn::GetAtt": [built.logical_id(endpoint.endpoint), "EndpointName"]}


# -- the default stack ----------------------------------------------------------------------


def test_default_has_one_endpoint_per_hosting_option(built):
    assert set(built.stack.ic_endpoints) == {"shared-g5"}
    assert set(built.stack.ic_models) == {"llama-7b-chat", "llama-13b", "flan-t5-xl"}
    assert set(built.stack.single_model_endpoints) == {"summarizer"}
    assert set(built.stack.multi_model_endpoints) == {"small-models"}
    assert set(built.stack.async_endpoints) == {"batch-summarizer"}
    built.template.resource_count_is("AWS::SageMaker::Endpoint", 4)
    built.template.resource_count_is("AWS::SageMaker::InferenceComponent", 3)


def test_ic_models_of_different_sizes_share_a_g5_12xlarge(built):
    config = built.properties(built.stack.ic_endpoints["shared-g5"].endpoint_config)
    assert config["ProductionVariants"][0]["InstanceType"] == "ml.g5.12xlarge"
    gpus = {
        name: built.properties(model.component)["Specification"]["ComputeResourceRequirements"][
            "NumberOfAcceleratorDevicesRequired"
        ]
        for name, model in built.stack.ic_models.items()
    }
    assert gpus == {"llama-7b-chat": 1, "llama-13b": 2, "flan-t5-xl": 1}
    assert sum(gpus.values()) <= 4


def test_small_model_scales_to_zero_with_per_model_tracking(built):
    targets = {
        name: built.properties(model.scaling.target)
        for name, model in built.stack.ic_models.items()
    }
    assert targets["flan-t5-xl"]["MinCapacity"] == 0
    assert targets["llama-7b-chat"]["MinCapacity"] == 1
    assert {t["ResourceId"] for t in targets.values()} == {
        "inference-component/FmpInference-llama-7b-chat-62e167c0",
        "inference-component/FmpInference-llama-13b-62e167c0",
        "inference-component/FmpInference-flan-t5-xl-62e167c0",
    }
    built.template.resource_properties_count_is(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {"PolicyType": "TargetTrackingScaling"},
        3 + 2 + 1,  # one per IC model, one per single-/multi-model/asynchronous endpoint
    )
    # One wake-up alarm for the model and one for the asynchronous endpoint scaling to zero
    # (the other alarms are the observability's, whose actions are the notification topic).
    wake_up = [
        resource
        for resource in built.json["Resources"].values()
        if resource["Type"] == "AWS::CloudWatch::Alarm"
        and all("Ref" in action for action in resource["Properties"]["AlarmActions"])
        and all(
            built.json["Resources"][action["Ref"]]["Type"]
            == "AWS::ApplicationAutoScaling::ScalingPolicy"
            for action in resource["Properties"]["AlarmActions"]
        )
    ]
    assert len(wake_up) == 2


def _role_statements(built: Built, role) -> list[dict]:
    policy = role.node.find_child("DefaultPolicy")
    return built.properties(policy)["PolicyDocument"]["Statement"]


def test_models_read_their_own_prefix_of_the_artifacts_bucket(built):
    model = built.stack.ic_models["llama-13b"]
    source = built.properties(model.model)["PrimaryContainer"]["ModelDataSource"]["S3DataSource"]
    # The bucket is the artifacts stack's, read through its export.
    bucket = {
        "Fn::ImportValue": "FmpInferenceArtifacts:"
        "ExportsOutputRefModelArtifactsBucket2C3831B7997AC9D7"
    }
    assert built.stack.resolve(built.stack.artifacts.bucket.bucket_name) == bucket
    assert source["S3Uri"] == {"Fn::Join": ["", ["s3://", bucket, "/models/llama-13b/"]]}
    statements = _role_statements(built, built.stack.ic_endpoints["shared-g5"].execution_role)
    readable = [
        resource
        for statement in statements
        if statement["Action"] == "s3:GetObject"
        for resource in statement["Resource"]
    ]
    bucket_arn = ["arn:", {"Ref": "AWS::Partition"}, ":s3:::", bucket]
    own_prefix = {"Fn::Join": ["", [*bucket_arn, "/models/llama-13b/*"]]}
    assert own_prefix in readable
    assert len(readable) == 3  # one prefix per model on the endpoint, nothing wider
    [listing] = [s for s in statements if s["Action"] == "s3:ListBucket"]
    assert listing["Resource"] == {"Fn::Join": ["", bucket_arn]}
    # One listing statement for the endpoint's models, each limited to its own prefix.
    assert listing["Condition"] == {
        "StringLike": {
            "s3:prefix": ["models/llama-7b-chat/*", "models/llama-13b/*", "models/flan-t5-xl/*"]
        }
    }


def _account(mapping: str) -> dict:
    return {"Fn::FindInMap": [mapping, {"Ref": "AWS::Region"}, "account"]}


def _dlc_repository(repository: str, mapping: str) -> dict:
    return {
        "Fn::Join": [
            "",
            [
                "arn:",
                {"Ref": "AWS::Partition"},
                ":ecr:",
                {"Ref": "AWS::Region"},
                ":",
                _account(mapping),
                f":repository/{repository}",
            ],
        ]
    }


def test_images_come_from_the_image_table_in_the_stack_region(built):
    image = built.properties(built.stack.ic_models["llama-7b-chat"].model)["PrimaryContainer"][
        "Image"
    ]
    # The environment-agnostic stack looks the publishing account up by region.
    assert image == {
        "Fn::Join": [
            "",
            [
                _account("LmiGpuImageAccounts"),
                ".dkr.ecr.",
                {"Ref": "AWS::Region"},
                ".",
                {"Ref": "AWS::URLSuffix"},
                "/djl-inference:0.36.0-lmi27.0.0-cu130",
            ],
        ]
    }
    roles = {
        ("djl-inference", "LmiGpuImageAccounts"): [
            built.stack.ic_endpoints["shared-g5"].execution_role,
            built.stack.single_model_endpoints["summarizer"].execution_role,
        ],
        ("pytorch-inference", "PytorchCpuImageAccounts"): [
            built.stack.multi_model_endpoints["small-models"].execution_role
        ],
    }
    for (repository, mapping), repository_roles in roles.items():
        for role in repository_roles:
            pulls = [
                s["Resource"]
                for s in _role_statements(built, role)
                if "ecr:BatchGetImage" in s["Action"]
            ]
            # exactly the image's repository, once, however many models share the image
            assert pulls == [_dlc_repository(repository, mapping)]


def test_isolated_summarizer(built):
    summarizer = built.stack.single_model_endpoints["summarizer"]
    assert built.properties(summarizer.model)["EnableNetworkIsolation"] is True
    capture = built.properties(summarizer.endpoint_config)["DataCaptureConfig"]
    assert capture["InitialSamplingPercentage"] == 10
    assert "KmsKeyId" in capture


def test_fleet_of_small_models_on_cpu(built):
    fleet = built.stack.multi_model_endpoints["small-models"]
    container = built.properties(fleet.model)["PrimaryContainer"]
    assert container["Mode"] == "MultiModel"
    assert container["ModelDataUrl"] == {
        "Fn::Join": [
            "",
            [
                "s3://",
                built.stack.resolve(built.stack.artifacts.bucket.bucket_name),
                "/models/small-models/",
            ],
        ]
    }
    config = built.properties(fleet.endpoint_config)
    assert config["ProductionVariants"][0]["InstanceType"] == "ml.m5.xlarge"


def test_outputs(built):
    outputs = built.json["Outputs"]
    endpoints = [
        built.stack.ic_endpoints["shared-g5"],
        built.stack.single_model_endpoints["summarizer"],
        built.stack.multi_model_endpoints["small-models"],
        built.stack.async_endpoints["batch-summarizer"],
    ]
    assert outputs["EndpointNames"]["Value"] == {
        "Fn::Join": [",", [endpoint_name_of(built, e) for e in endpoints]]
    }
    assert outputs["EndpointSharedG5"]["Value"] == endpoint_name_of(built, endpoints[0])
    assert outputs["EndpointSummarizer"]["Value"] == endpoint_name_of(built, endpoints[1])
    assert outputs["EndpointSmallModels"]["Value"] == endpoint_name_of(built, endpoints[2])
    assert outputs["EndpointBatchSummarizer"]["Value"] == endpoint_name_of(built, endpoints[3])
    # One name: CloudFormation's join of one value is that value.
    assert outputs["AsyncEndpoints"]["Value"] == endpoint_name_of(built, endpoints[3])
    async_bucket = {"Ref": built.logical_id(built.stack.async_storage.bucket)}
    for output, folder in (("Input", "inputs"), ("Output", "outputs"), ("Failure", "failures")):
        assert outputs[f"Async{output}BatchSummarizer"]["Value"] == {
            "Fn::Join": ["", ["s3://", async_bucket, f"/async/batch-summarizer/{folder}"]]
        }
    assert outputs["ComponentsSharedG5"]["Value"] == (
        "FmpInference-llama-7b-chat-62e167c0,FmpInference-llama-13b-62e167c0,"
        "FmpInference-flan-t5-xl-62e167c0"
    )
    assert "ModelArtifactsBucket" not in outputs  # the artifacts stack's output
    assert outputs["InvokeExample"]["Value"] == {
        "Fn::Join": [
            "",
            [
                "aws sagemaker-runtime invoke-endpoint --endpoint-name ",
                endpoint_name_of(built, endpoints[0]),
                " --inference-component-name FmpInference-llama-7b-chat-62e167c0 "
                "--content-type application/json --body fileb://request.json response.json",
            ],
        ]
    }
    topic = built.stack.node.find_child("Notifications").topic
    assert outputs["NotificationTopicArn"]["Value"] == built.stack.resolve(topic.topic_arn)
    assert len(outputs) == 12 == built.stack.config.output_count


def test_construct_ids_derive_from_names(built):
    resources = built.json["Resources"]
    ids = {
        # Endpoints and components carry their replacement key (fm_platform.rules.replacement).
        "IcEndpointsharedg5EndpointEndpoint62e167c0": "AWS::SageMaker::Endpoint",
        "IcEndpointsharedg5Modelflant5xlComponent62e167c0": "AWS::SageMaker::InferenceComponent",
        "SingleModelEndpointsummarizerEndpoint829f941f": "AWS::SageMaker::Endpoint",
        "MultiModelEndpointsmallmodelsModel": "AWS::SageMaker::Model",
    }
    for prefix, resource_type in ids.items():
        matching = [k for k, v in resources.items() if k[:-8] == prefix]
        assert len(matching) == 1, prefix
        assert resources[matching[0]]["Type"] == resource_type


def test_construct_ids_do_not_depend_on_list_positions(built):
    default = DEMO
    shuffled_endpoint = dataclasses.replace(
        default.ic_endpoints[0], models=tuple(reversed(default.ic_endpoints[0].models))
    )
    config = dataclasses.replace(default, ic_endpoints=(shuffled_endpoint,))
    stack = InferenceStack(new_app(), "FmpInference", config=config)
    resources = Template.from_stack(stack).to_json()["Resources"]
    assert set(resources) == set(built.json["Resources"])


def test_given_vpc_places_every_endpoint_with_a_dedicated_group():
    stack = cdk.Stack(new_app(), "Network")
    vpc = ec2.Vpc(
        stack,
        "Vpc",
        max_azs=1,
        nat_gateways=0,
        subnet_configuration=[
            ec2.SubnetConfiguration(name="models", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        ],
    )
    inference = InferenceStack(stack.node.scope, "InVpc", config=DEMO, vpc=vpc)
    template = Template.from_stack(inference)
    template.resource_count_is("AWS::EC2::SecurityGroup", 4)
    in_vpc = {"VpcConfig": Match.object_like({"Subnets": [Match.any_value()]})}
    template.resource_properties_count_is("AWS::SageMaker::Model", in_vpc, 6)
    template.resource_properties_count_is("AWS::SageMaker::EndpointConfig", in_vpc, 1)
    groups = [
        inference.ic_endpoints["shared-g5"].security_groups[0],
        inference.single_model_endpoints["summarizer"].security_group,
        inference.multi_model_endpoints["small-models"].security_group,
        inference.async_endpoints["batch-summarizer"].security_group,
    ]
    assert len({group.node.path for group in groups}) == 4


# -- configuration --------------------------------------------------------------------------


FULL_MAPPING = {
    "ic_endpoints": [
        {
            "name": "tenant-a",
            "instance_type": "ml.g5.48xlarge",
            "max_instance_count": 3,
            "models": [
                {
                    "model_name": "mistral-7b",
                    "accelerators": 1,
                    "min_memory_mib": 16384,
                    "container": {"environment": {"OPTION_ROLLING_BATCH": "vllm"}},
                    "scaling": {"min_copies": 0, "max_copies": 3, "target_value": 4},
                }
            ],
        }
    ],
    "single_model_endpoints": [
        {
            "name": "fraud",
            "instance_type": "ml.c5.2xlarge",
            "container": {"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/fraud:1"},
            "scaling": {"max_instances": 4, "target_invocations_per_instance": 100},
            "data_capture": {"sampling_percentage": 50},
        }
    ],
    "multi_model_endpoints": [],
}


def test_from_mapping_builds_typed_specs():
    config = InferenceConfig.from_mapping(FULL_MAPPING)
    assert config == InferenceConfig(
        ic_endpoints=(
            InferenceComponentEndpointConfig(
                name="tenant-a",
                instance_type="ml.g5.48xlarge",
                max_instance_count=3,
                models=(
                    InferenceComponentModelConfig(
                        model_name="mistral-7b",
                        accelerators=1,
                        min_memory_mib=16384,
                        container=ModelContainer(environment={"OPTION_ROLLING_BATCH": "vllm"}),
                        scaling=ComponentScaling(min_copies=0, max_copies=3, target_value=4),
                    ),
                ),
            ),
        ),
        single_model_endpoints=(
            SingleModelEndpointConfig(
                name="fraud",
                instance_type="ml.c5.2xlarge",
                container=ModelContainer(
                    image="123456789012.dkr.ecr.us-east-1.amazonaws.com/fraud:1"
                ),
                scaling=InstanceScaling(max_instances=4, target_invocations_per_instance=100),
                data_capture=DataCaptureOptions(sampling_percentage=50),
            ),
        ),
        multi_model_endpoints=(),
    )


def test_from_mapping_keeps_defaults_for_missing_keys():
    config = InferenceConfig.from_mapping({"multi_model_endpoints": []})
    assert config == InferenceConfig()


def test_from_mapping_rejects_unknown_top_level_key():
    with pytest.raises(ValueError) as error:
        InferenceConfig.from_mapping({"endpoints": [], "zzz": 1})
    message = str(error.value)
    assert "endpoints=[]: unknown key; did you mean ic_endpoints?" in message
    assert (
        "zzz=1: unknown key; allowed keys: ic_endpoints, single_model_endpoints, "
        "multi_model_endpoints" in message
    )


def test_from_mapping_rejects_unknown_nested_key():
    data = json.loads(json.dumps(FULL_MAPPING))
    data["ic_endpoints"][0]["models"][0]["gpus"] = 2
    with pytest.raises(ValueError) as error:
        InferenceConfig.from_mapping(data)
    message = str(error.value)
    assert (
        "ic_endpoints[0].models[0].gpus=2: unknown key; allowed keys: alarms, model_name" in message
    )


def test_from_mapping_reports_missing_keys_and_bad_scaling_keys():
    data = {
        "multi_model_endpoints": [{"name": "fleet", "scaling": {"max_instances": 2, "cooldown": 5}}]
    }
    with pytest.raises(ValueError) as error:
        InferenceConfig.from_mapping(data)
    message = str(error.value)
    assert "multi_model_endpoints[0]={'name': 'fleet', " in message
    assert ": missing keys: instance_type" in message
    assert "multi_model_endpoints[0].scaling.cooldown=5: unknown key" in message
    assert (
        "scaling={'max_instances': 2, 'cooldown': 5}: missing keys: target_invocations" in message
    )


def test_from_mapping_reports_values_of_the_wrong_type():
    data = {
        "ic_endpoints": [
            {
                "name": "shared",
                "instance_type": "ml.g5.12xlarge",
                "models": [{"model_name": "m", "accelerators": "1", "min_memory_mib": 1024}],
            }
        ],
        "single_model_endpoints": [
            {"name": "s", "instance_type": "ml.m5.xlarge", "network_isolation": "yes"}
        ],
    }
    with pytest.raises(ValueError) as error:
        InferenceConfig.from_mapping(data)
    message = str(error.value)
    assert "ic_endpoints[0].models[0].accelerators='1': must be an integer" in message
    assert "single_model_endpoints[0].network_isolation='yes': must be true or false" in message


def test_duplicate_names_are_rejected():
    default = DEMO
    clash = MultiModelEndpointConfig(name="summarizer", instance_type="ml.m5.xlarge")
    config = dataclasses.replace(default, multi_model_endpoints=(clash,))
    with pytest.raises(
        ValueError, match=r"multi_model_endpoints\[0\].name='summarizer': must be unique"
    ):
        config.validate()


def test_too_many_endpoints_for_the_outputs_limit():
    fleet = tuple(
        MultiModelEndpointConfig(name=f"fleet-{index}", instance_type="ml.m5.xlarge")
        for index in range(198)
    )
    config = InferenceConfig(ic_endpoints=DEMO.ic_endpoints, multi_model_endpoints=fleet)
    # EndpointNames, InvokeExample, NotificationTopicArn; one per endpoint; one per IC one.
    assert config.output_count == 3 + 199 + 1
    with pytest.raises(ValueError, match="endpoints=199: need 203 stack outputs, more than"):
        config.validate()


@pytest.mark.slow
def test_too_many_models_for_one_stack_is_rejected_before_deploying():
    models = tuple(
        InferenceComponentModelOptions(
            model_name=f"model-{index:03d}",
            accelerators=1,
            min_memory_mib=8192,
            scaling=ComponentScaling(min_copies=0, max_copies=2),
        )
        for index in range(90)
    )
    endpoint = InferenceComponentEndpointConfig(
        name="big", instance_type="ml.g5.12xlarge", models=models
    )
    config = InferenceConfig(
        ic_endpoints=(endpoint,), single_model_endpoints=(), multi_model_endpoints=()
    )
    with pytest.raises(ValueError) as error:
        InferenceStack(new_app(), "Big", config=config)
    message = str(error.value)
    assert "invalid stack Big:" in message
    assert "CloudFormation allows at most 500 per stack" in message
    assert "split the endpoints across several InferenceStacks" in message


def test_bad_endpoint_name_is_rejected():
    config = InferenceConfig(
        ic_endpoints=(),
        single_model_endpoints=(
            SingleModelEndpointConfig(name="a_b", instance_type="ml.m5.xlarge"),
        ),
        multi_model_endpoints=(),
    )
    with pytest.raises(ValueError, match=r"single_model_endpoints\[0\].name='a_b'"):
        InferenceStack(new_app(), "S", config=config)


def test_models_read_an_existing_bucket_named_in_the_configuration():
    app = new_app()
    config = InferenceConfig(
        artifacts_bucket_name="my-models",
        artifacts_key_arn="arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
        ic_endpoints=DEMO.ic_endpoints,
    )
    stack = InferenceStack(app, "Existing", config=config)
    assert stack.artifacts_stack is None
    assert [s.node.id for s in app.node.children] == ["Existing"]  # no artifacts stack
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::S3::Bucket", 0)
    template.has_resource_properties(
        "AWS::SageMaker::Model",
        {
            "PrimaryContainer": Match.object_like(
                {
                    "ModelDataSource": {
                        "S3DataSource": Match.object_like(
                            {"S3Uri": "s3://my-models/models/llama-7b-chat/"}
                        )
                    }
                }
            )
        },
    )
    assert "kms:Decrypt" in json.dumps(template.find_resources("AWS::IAM::Policy"))


def test_an_existing_bucket_and_key_are_checked_by_key():
    with pytest.raises(ValueError) as error:
        InferenceConfig(
            artifacts_bucket_name="s3://My_Models", artifacts_key_arn="alias/models"
        ).validate()
    message = str(error.value)
    assert "artifacts_bucket_name='s3://My_Models': must be an S3 bucket name" in message
    assert "artifacts_key_arn='alias/models': must be a KMS key ARN" in message


def test_a_stack_built_alone_deploys_its_bucket_first_in_a_stack_of_its_own():
    app = new_app()
    stack = InferenceStack(app, "Alone", config=dataclasses.replace(DEMO, multi_model_endpoints=()))
    assert stack.artifacts_stack is not None
    assert stack.artifacts_stack.node.id == "AloneArtifacts"
    assert stack.artifacts_stack in stack.dependencies
    buckets = Template.from_stack(stack).find_resources("AWS::S3::Bucket")
    assert buckets and not [name for name in buckets if name.startswith("ModelArtifacts")]


def test_an_empty_configuration_builds_no_endpoint():
    assert InferenceConfig().endpoint_names == ()
    template = Template.from_stack(InferenceStack(new_app(), "Empty"))
    for resource_type in (
        "AWS::SageMaker::Endpoint",
        "AWS::SageMaker::Model",
        "AWS::SageMaker::InferenceComponent",
    ):
        template.resource_count_is(resource_type, 0)
