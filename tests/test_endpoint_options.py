"""The newer endpoint and component options: a configuration turning every one on
(tests/fixtures/every-endpoint-option.json) synthesizes clean under cfn-lint and the three
cdk-nag packs and sets each property; each option's bad values are refused with the key,
the value and what is allowed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match, Template
from cfnlint.api import ManualArgs, lint

from fm_platform.config import load_config
from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.component_placement import ComponentScheduling
from fm_platform.constructs.inference.inference_component import RollingUpdate
from fm_platform.constructs.inference.instance_pools import InstanceTypeResources
from fm_platform.constructs.inference.variant_features import (
    CapacityReservation,
    EndpointMetrics,
    PrefixAwareRouting,
    ScaleInPolicy,
)
from fm_platform.core.compliance import apply_compliance_packs
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks.inference import InferenceStack
from tests.components import chat_endpoint, chat_model
from tests.support import nag_findings, new_app

FIXTURE = Path(__file__).parent / "fixtures" / "every-endpoint-option.json"
ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/inference-g5"


def _mapping() -> dict[str, Any]:
    mapping: dict[str, Any] = json.loads(FIXTURE.read_text())
    return mapping


@pytest.fixture(scope="module")
def every_option() -> dict[str, Any]:
    app = new_app()
    config = load_config(_mapping())
    stack = InferenceStack(app, "EveryOption", config=config.inference)
    template = Template.from_stack(stack).to_json()
    return {"app": app, "template": template}


def _one(template: dict[str, Any], kind: str, under: str = "") -> dict[str, Any]:
    (found,) = [
        r["Properties"]
        for key, r in template["Resources"].items()
        if r["Type"] == kind and key.startswith(under)
    ]
    return found


@pytest.mark.slow  # cfn-lint
def test_every_option_is_cfn_lint_clean(every_option):
    matches = lint(json.dumps(every_option["template"]), config=ManualArgs(regions=["us-east-1"]))
    assert [f"{m.rule.id} {m.path} {m.message}" for m in matches] == []


def test_every_option_passes_the_three_compliance_packs():
    app = new_app()
    InferenceStack(app, "EveryOption", config=load_config(_mapping()).inference)
    apply_compliance_packs(app)
    assert nag_findings(app) == []


def test_the_variant_carries_every_endpoint_option(every_option):
    config = _one(
        every_option["template"], "AWS::SageMaker::EndpointConfig", "IcEndpointeveryoption"
    )
    (variant,) = config["ProductionVariants"]
    assert variant["ManagedInstanceScaling"]["ScaleInPolicy"] == {
        "Strategy": "CONSOLIDATION",
        "CooldownInMinutes": 15,
        "MaximumStepSize": 2,
    }
    assert variant["RoutingConfig"] == {
        "RoutingStrategy": "PREFIX_AWARE",
        "PrefixAwareRoutingConfig": {"PrefixLength": 2048, "ConcurrencyThreshold": 8},
    }
    assert variant["CapacityReservationConfig"] == {
        "CapacityReservationPreference": "capacity-reservations-only",
        "MlReservationArn": ARN,
    }
    assert variant["InferenceAmiVersion"] == "al2-ami-sagemaker-inference-gpu-3-1"
    assert variant["EnableSSMAccess"] is True
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 1800
    assert config["MetricsConfig"] == {
        "EnableEnhancedMetrics": True,
        "EnableDetailedObservability": True,
        "MetricPublishFrequencyInSeconds": 60,
    }


def test_the_component_carries_every_component_option(every_option):
    component = _one(
        every_option["template"], "AWS::SageMaker::InferenceComponent", "IcEndpointeveryoption"
    )
    specification = component["Specification"]
    assert specification["SchedulingConfig"] == {
        "PlacementStrategy": "BINPACK",
        "AvailabilityZoneBalance": {"EnforcementMode": "PERMISSIVE", "MaxImbalance": 1},
    }
    assert specification["DataCacheConfig"] == {"EnableCaching": True}
    policy = component["DeploymentConfig"]["RollingUpdatePolicy"]
    # One copy of the two it starts with: 50%, within AWS's 5%-50% of the copy count.
    assert component["RuntimeConfig"] == {"CopyCount": 2}
    assert policy["MaximumBatchSize"] == {"Type": "COPY_COUNT", "Value": 1}
    assert policy["RollbackMaximumBatchSize"] == {"Type": "COPY_COUNT", "Value": 2}
    assert policy["MaximumExecutionTimeoutInSeconds"] == 1800
    assert component["DeploymentConfig"]["AutoRollbackConfiguration"] == {
        "Alarms": [{"AlarmName": "every-option-chat-errors"}]
    }
    # SageMaker reads the alarm's state with the endpoint's execution role.
    reads = [
        statement["Resource"]
        for key, r in every_option["template"]["Resources"].items()
        if r["Type"] == "AWS::IAM::Policy" and key.startswith("IcEndpointeveryoption")
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
        if statement["Action"] == "cloudwatch:DescribeAlarms"
    ]
    assert [read["Fn::Join"][1][-1] for read in reads] == [":alarm:every-option-chat-errors"]


def test_defaults_leave_the_new_properties_out_but_turn_detailed_observability_off():
    stack = cdk.Stack(new_app(), "Plain")
    chat_model(stack, chat_endpoint(stack))
    template = Template.from_stack(stack).to_json()
    config = _one(template, "AWS::SageMaker::EndpointConfig")
    (variant,) = config["ProductionVariants"]
    # botocore MetricsConfig.EnableDetailedObservability: "The default value for new
    # endpoint configurations is True"; the option's default (False) is written.
    assert config["MetricsConfig"] == {
        "EnableDetailedObservability": False,
        "EnableEnhancedMetrics": False,
    }
    for key in (
        "CapacityReservationConfig",
        "InferenceAmiVersion",
        "EnableSSMAccess",
        "VariantInstanceProvisionTimeoutInSeconds",
    ):
        assert key not in variant
    assert "ScaleInPolicy" not in variant["ManagedInstanceScaling"]
    assert variant["RoutingConfig"] == {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
    specification = _one(template, "AWS::SageMaker::InferenceComponent")["Specification"]
    assert "SchedulingConfig" not in specification
    assert "DataCacheConfig" not in specification


@pytest.mark.parametrize(
    ("scheduling", "balance"),
    [
        # A strategy alone asks for no balance across zones: botocore's MaxImbalance
        # defaults to 0 (copies held level), so its largest value, 100, is written.
        (
            ComponentScheduling(placement_strategy="BINPACK"),
            {"EnforcementMode": "PERMISSIVE", "MaxImbalance": 100},
        ),
        (
            ComponentScheduling(placement_strategy="SPREAD", max_az_imbalance=0),
            {"EnforcementMode": "PERMISSIVE", "MaxImbalance": 0},
        ),
    ],
)
def test_the_zone_balance_written_is_the_one_asked_for(scheduling, balance):
    stack = cdk.Stack(new_app(), "Placed")
    chat_model(stack, chat_endpoint(stack), scheduling=scheduling)
    template = Template.from_stack(stack).to_json()
    specification = _one(template, "AWS::SageMaker::InferenceComponent")["Specification"]
    assert specification["SchedulingConfig"] == {
        "PlacementStrategy": scheduling.placement_strategy,
        "AvailabilityZoneBalance": balance,
    }


BASE = InferenceComponentEndpointProps(instance_type="ml.g5.12xlarge")


PREFIX_AWARE = {
    "routing_strategy": "PREFIX_AWARE",
    "prefix_aware_routing": PrefixAwareRouting(prefix_length=2048, concurrency_threshold=8),
}


@pytest.mark.parametrize(("max_instance_count", "warned"), [(1, True), (2, False)])
def test_prefix_aware_routing_on_one_instance_gets_a_warning(max_instance_count, warned):
    # botocore RoutingStrategy: "The endpoint applies prefix-aware routing only when two or
    # more instances can serve the request."
    stack = cdk.Stack(new_app(), "Routed")
    props = replace(
        BASE, **PREFIX_AWARE, initial_instance_count=1, max_instance_count=max_instance_count
    )
    InferenceComponentEndpoint(stack, "Endpoint", props)
    warnings = Annotations.from_stack(stack).find_warning(
        "/Routed/Endpoint", Match.string_like_regexp("PREFIX_AWARE")
    )
    expected = (
        "routing_strategy PREFIX_AWARE with max_instance_count 1: the endpoint applies "
        "prefix-aware routing only when two or more instances can serve the request (botocore "
        "RoutingStrategy), so it never does here; allow at least 2 instances, or route with "
        "LEAST_OUTSTANDING_REQUESTS"
    )
    ack = " [ack: fm_platform:prefixAwareOnOneInstance]"
    assert [w.entry.data for w in warnings] == ([expected + ack] if warned else [])
    config = Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig")
    (variant,) = next(iter(config.values()))["Properties"]["ProductionVariants"]
    assert variant["RoutingConfig"]["RoutingStrategy"] == "PREFIX_AWARE"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"scale_in": ScaleInPolicy(strategy="SHRINK")}, "scale_in.strategy='SHRINK'"),  # type: ignore[arg-type]
        (
            {"scale_in": ScaleInPolicy(cooldown_minutes=2)},
            "scale_in.cooldown_minutes=2: below the minimum 5; allowed: 5-1440",
        ),
        (
            {"scale_in": ScaleInPolicy(maximum_step_size=101)},
            "scale_in.maximum_step_size=101: above the maximum 100; allowed: 1-100",
        ),
        (
            {"routing_strategy": "KV_AWARE"},
            "routing_strategy='KV_AWARE': not accepted by CloudFormation's",
        ),
        (
            {"prefix_aware_routing": PrefixAwareRouting(prefix_length=2048)},
            "prefix_aware_routing='LEAST_OUTSTANDING_REQUESTS': prefix-aware settings need "
            "routing_strategy PREFIX_AWARE",
        ),
        (
            {
                "routing_strategy": "PREFIX_AWARE",
                "prefix_aware_routing": PrefixAwareRouting(prefix_length=512),
            },
            "prefix_aware_routing.prefix_length=512: below the minimum 1024; allowed: 1024-65536",
        ),
        (
            {
                "routing_strategy": "PREFIX_AWARE",
                "prefix_aware_routing": PrefixAwareRouting(concurrency_threshold=2000),
            },
            "prefix_aware_routing.concurrency_threshold=2000: above the maximum 1024; "
            "allowed: 1-1024",
        ),
        (
            {"capacity_reservation": CapacityReservation(ml_reservation_arn="plan-1")},
            "capacity_reservation.ml_reservation_arn='plan-1'",
        ),
        (
            {
                "capacity_reservation": CapacityReservation(
                    ml_reservation_arn=ARN, instance_type="ml.p5.48xlarge"
                )
            },
            "capacity_reservation.instance_type='ml.p5.48xlarge': the reservation must hold the "
            "endpoint's instance type ml.g5.12xlarge",
        ),
        ({"inference_ami_version": "al2-gpu"}, "inference_ami_version='al2-gpu'"),
        (
            {"instance_provision_timeout_s": 120},
            "instance_provision_timeout_s=120: below the minimum 300; allowed: 300-3600",
        ),
        (
            {"metrics": EndpointMetrics(publish_frequency_s=45)},
            "metrics.publish_frequency_s=45: must be one of 10, 30, 60, 120, 180, 240, 300",
        ),
    ],
)
def test_bad_endpoint_options_are_refused_by_key(changes, expected):
    with pytest.raises(ValueError, match="invalid InferenceComponentEndpointProps") as error:
        InferenceComponentEndpoint(
            cdk.Stack(new_app(), "Bad"), "Endpoint", replace(BASE, **changes)
        )
    assert expected in str(error.value)


def test_prefix_aware_routing_without_its_two_settings_is_refused_with_both():
    # botocore PrefixAwareRoutingConfig: PrefixLength and ConcurrencyThreshold are each
    # "Required when RoutingStrategy is PREFIX_AWARE"; CloudFormation's schema cannot say so.
    with pytest.raises(ValueError) as error:
        InferenceComponentEndpoint(
            cdk.Stack(new_app(), "Bad"), "Endpoint", replace(BASE, routing_strategy="PREFIX_AWARE")
        )
    problems = error.value.problems  # type: ignore[attr-defined]
    assert problems == (
        "prefix_aware_routing.prefix_length=None: required with routing_strategy PREFIX_AWARE "
        "(botocore PrefixAwareRoutingConfig.PrefixLength): set 1024-65536, the bytes of the "
        "request body (characters of the messages with the OpenAI-compatible API) that "
        "requests must share to go to the same copy: the shared system prompt and a little "
        "more",
        "prefix_aware_routing.concurrency_threshold=None: required with routing_strategy "
        "PREFIX_AWARE (botocore PrefixAwareRoutingConfig.ConcurrencyThreshold): set 1-1024, "
        "the requests in flight on a copy at which the endpoint sends the next one elsewhere: "
        "what the copy that serves the fewest concurrent requests serves",
    )


def test_prefix_aware_routing_with_one_setting_is_refused_for_the_other():
    changes = {
        "routing_strategy": "PREFIX_AWARE",
        "prefix_aware_routing": PrefixAwareRouting(prefix_length=2048),
    }
    with pytest.raises(ValueError) as error:
        InferenceComponentEndpoint(
            cdk.Stack(new_app(), "Bad"), "Endpoint", replace(BASE, **changes)
        )
    (problem,) = error.value.problems  # type: ignore[attr-defined]
    assert problem.startswith("prefix_aware_routing.concurrency_threshold=None: required with")


def test_prefix_aware_routing_in_the_configuration_names_the_key():
    mapping = _mapping()
    del mapping["inference"]["ic_endpoints"][0]["prefix_aware_routing"]["prefix_length"]
    with pytest.raises(ValidationError) as error:
        load_config(mapping)
    assert (
        "inference.ic_endpoints[0].prefix_aware_routing.prefix_length=None (endpoint "
        "'every-option'): required with routing_strategy PREFIX_AWARE" in str(error.value)
    )


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"scheduling": ComponentScheduling(placement_strategy="PACK")},  # type: ignore[arg-type]
            "scheduling.placement_strategy='PACK'",
        ),
        (
            {"scheduling": ComponentScheduling(max_az_imbalance=101)},
            "scheduling.max_az_imbalance=101: above the maximum 100; allowed: 0-100",
        ),
        (
            {"rolling_update": RollingUpdate(rollback_batch_size=0)},
            "rolling_update.rollback_batch_size=0: must be between 1 and 100",
        ),
        (
            {"rolling_update": RollingUpdate(rollback_alarms=[f"alarm-{n}" for n in range(11)])},
            "rolling_update.rollback_alarms='11 alarms': at most 10 (botocore AlarmList)",
        ),
    ],
)
def test_bad_component_options_are_refused_by_key(changes, expected):
    stack = cdk.Stack(new_app(), "Bad")
    endpoint = chat_endpoint(stack)
    with pytest.raises(ValueError, match="invalid InferenceComponentModelProps") as error:
        chat_model(stack, endpoint, **changes)
    assert expected in str(error.value)


def test_a_publish_frequency_the_copy_counts_cannot_follow_is_refused_in_the_configuration():
    mapping = _mapping()
    mapping["inference"]["ic_endpoints"][0]["metrics"]["publish_frequency_s"] = 10
    with pytest.raises(ValidationError) as error:
        load_config(mapping)
    (line,) = error.value.problems
    assert line.startswith("inference.ic_endpoints[0].metrics.publish_frequency_s=10")
    assert "while the endpoint's alarms count instances or copies" in line


def test_without_counting_alarms_another_publish_frequency_is_accepted():
    mapping = _mapping()
    endpoint = mapping["inference"]["ic_endpoints"][0]
    endpoint["metrics"]["publish_frequency_s"] = 10
    endpoint["alarms"] = {"instances_at_max": False, "latency_objective_ms": 500}
    endpoint["models"][0]["alarms"] = {"copies_at_max": False}
    config = load_config(mapping)
    assert config.inference.ic_endpoints[0].metrics.publish_frequency_s == 10


# -- instance pools -------------------------------------------------------------------------


def test_fallback_types_become_the_variants_pools_and_components_get_one_spec_per_type(
    every_option,
):
    resources = every_option["template"]["Resources"]
    (variant,) = next(
        r["Properties"]["ProductionVariants"]
        for key, r in resources.items()
        if r["Type"] == "AWS::SageMaker::EndpointConfig" and key.startswith("IcEndpointfallback")
    )
    assert "InstanceType" not in variant  # a variant with pools names its types there only
    assert variant["InstancePools"] == [
        {"InstanceType": "ml.g5.12xlarge", "Priority": 1},
        {"InstanceType": "ml.g6e.12xlarge", "Priority": 2},
        {"InstanceType": "ml.g6.12xlarge", "Priority": 3},
    ]
    (component,) = [
        r["Properties"]
        for key, r in resources.items()
        if r["Type"] == "AWS::SageMaker::InferenceComponent" and "fallback" in key
    ]
    assert "Specification" not in component
    required = {
        s["InstanceType"]: s["ComputeResourceRequirements"]["NumberOfAcceleratorDevicesRequired"]
        for s in component["Specifications"]
    }
    assert required == {"ml.g5.12xlarge": 2, "ml.g6e.12xlarge": 1, "ml.g6.12xlarge": 2}


def test_a_per_type_container_gives_that_type_a_model_of_its_own(every_option):
    resources = every_option["template"]["Resources"]
    (component,) = [
        r["Properties"]
        for key, r in resources.items()
        if r["Type"] == "AWS::SageMaker::InferenceComponent" and "fallback" in key
    ]
    models = {
        s["InstanceType"]: s["ModelName"]["Fn::GetAtt"][0] for s in component["Specifications"]
    }
    own = models["ml.g5.12xlarge"]
    assert models["ml.g6.12xlarge"] == own  # no container of its own there
    typed = models["ml.g6e.12xlarge"]
    assert typed != own and "Modelmlg6e12xlarge" in typed
    typed_model, own_model = resources[typed]["Properties"], resources[own]["Properties"]
    assert typed_model["PrimaryContainer"]["Environment"] == {"OPTION_TENSOR_PARALLEL_DEGREE": "1"}
    for key in ("ExecutionRoleArn", "EnableNetworkIsolation"):
        assert typed_model.get(key) == own_model.get(key)
    # Without artifacts of its own it reads the component's.
    assert (
        typed_model["PrimaryContainer"]["ModelDataSource"]
        == own_model["PrimaryContainer"]["ModelDataSource"]
    )


def test_a_bad_per_type_container_is_refused_by_key():
    mapping = _mapping()
    entry = mapping["inference"]["ic_endpoints"][1]["models"][0]["per_instance_type"][0]
    entry["container"]["model_size_gib"] = 0
    with pytest.raises(ValidationError) as error:
        load_config(mapping)
    assert any(
        line.startswith(
            "inference.ic_endpoints[1].models[0].per_instance_type[0].container.model_size_gib=0"
        )
        and "must be greater than 0" in line
        for line in error.value.problems
    ), error.value.problems


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"fallback_instance_types": ["ml.g6.12xlarge", "ml.g6.12xlarge"]},
            "fallback_instance_types='ml.g6.12xlarge': must be unique",
        ),
        (
            {"fallback_instance_types": ["ml.g5.12xlarge"]},
            "fallback_instance_types='ml.g5.12xlarge': must be unique",
        ),
        (
            {
                "fallback_instance_types": [
                    "ml.g6.12xlarge",
                    "ml.g6e.12xlarge",
                    "ml.g5.24xlarge",
                    "ml.g6.24xlarge",
                    "ml.g6e.24xlarge",
                ]
            },
            "at most 4 (with instance_type, botocore's InstancePoolList holds 5 pools)",
        ),
        (
            {"fallback_instance_types": ["ml.g9.12xlarge"]},
            "fallback_instance_types[0]='ml.g9.12xlarge': not an instance type",
        ),
        (
            {
                "fallback_instance_types": ["ml.g6.12xlarge"],
                "capacity_reservation": CapacityReservation(ml_reservation_arn=ARN),
            },
            "none with a capacity_reservation: a reservation holds one instance type",
        ),
    ],
)
def test_bad_fallback_types_are_refused_by_key(changes, expected):
    with pytest.raises(ValueError, match="invalid InferenceComponentEndpointProps") as error:
        InferenceComponentEndpoint(
            cdk.Stack(new_app(), "Bad"), "Endpoint", replace(BASE, **changes)
        )
    assert expected in str(error.value)


def _pooled_model(stack: cdk.Stack, **model: Any) -> None:
    endpoint = chat_endpoint(stack, fallback_instance_types=["ml.g5.2xlarge"], max_instance_count=1)
    chat_model(stack, endpoint, **model)


def test_a_copy_that_does_not_fit_a_fallback_type_is_refused():
    with pytest.raises(ValueError, match="invalid InferenceComponentModelProps") as error:
        _pooled_model(cdk.Stack(new_app(), "Bad"), accelerators=2)
    assert "on fallback ml.g5.2xlarge.accelerators=2" in str(error.value)


def test_per_type_resources_must_name_a_fallback_type():
    with pytest.raises(ValueError, match="invalid InferenceComponentModelProps") as error:
        _pooled_model(
            cdk.Stack(new_app(), "Bad"),
            per_instance_type=[
                InstanceTypeResources(
                    instance_type="ml.g6.2xlarge", accelerators=1, min_memory_mib=8192
                )
            ],
        )
    assert (
        "per_instance_type[0].instance_type='ml.g6.2xlarge': one of the endpoint's "
        "fallback_instance_types: ml.g5.2xlarge"
    ) in str(error.value)


def test_minimum_copies_must_fit_each_fallback_type_at_synth():
    app = new_app()
    stack = cdk.Stack(app, "Pooled")
    # Two copies of one GPU each: the ml.g5.12xlarge (4 GPUs) holds them, one
    # ml.g5.2xlarge (1 GPU) does not.
    _pooled_model(stack, initial_copies=2)
    with pytest.raises(Exception, match="on fallback ml.g5.2xlarge: accelerators"):
        app.synth()


def test_a_serverless_endpoint_comes_from_the_configuration(every_option):
    variants = [
        variant
        for r in every_option["template"]["Resources"].values()
        if r["Type"] == "AWS::SageMaker::EndpointConfig"
        for variant in r["Properties"]["ProductionVariants"]
        if "ServerlessConfig" in variant
    ]
    assert [v["ServerlessConfig"] for v in variants] == [
        {"MemorySizeInMB": 3072, "MaxConcurrency": 10, "ProvisionedConcurrency": 1}
    ]
    assert "EndpointSporadic" in every_option["template"]["Outputs"]
    # Serverless endpoints cannot use ModelDataSource (botocore ContainerDefinition): the
    # model reads its archive of the artifacts bucket through ModelDataUrl.
    container = _one(
        every_option["template"], "AWS::SageMaker::Model", "ServerlessEndpointsporadic"
    )["PrimaryContainer"]
    assert "ModelDataSource" not in container
    assert container["ModelDataUrl"]["Fn::Join"][1][-1] == "/models/sporadic/model.tar.gz"


def test_a_bad_serverless_endpoint_is_named_by_its_configuration_key():
    mapping = _mapping()
    mapping["inference"]["serverless_endpoints"][0]["memory_size_mib"] = 1000
    with pytest.raises(ValidationError) as error:
        load_config(mapping)
    assert any(
        line.startswith("inference.serverless_endpoints[0].memory_size_mib=1000")
        for line in error.value.problems
    ), error.value.problems


@pytest.mark.parametrize(
    ("path", "value", "key", "why"),
    [
        (
            ("serverless_endpoints", 0, "container", "model_data_url"),
            "s3://team-models/sporadic/",
            "inference.serverless_endpoints[0].container.model_data_url="
            "'s3://team-models/sporadic/'",
            ": is a prefix of uncompressed files, which a serverless endpoint cannot read",
        ),
        (
            ("ic_endpoints", 0, "models", 0, "container", "model_data_url"),
            "s3://team-models/chat/model.zip",
            "inference.ic_endpoints[0].models[0].container.model_data_url="
            "'s3://team-models/chat/model.zip'",
            ": must name a model.tar.gz (ending in .tar.gz; botocore ModelDataUrl) or a prefix "
            "of uncompressed files ending in / (ModelDataSource S3Prefix)",
        ),
        (
            ("ic_endpoints", 1, "models", 0, "per_instance_type", 0, "container", "environment"),
            {"OPTION_TENSOR_PARALLEL_DEGREE": "1", "HF_TOKEN": "x" * 1100},
            "inference.ic_endpoints[1].models[0].per_instance_type[0].container.environment."
            "HF_TOKEN='value of 1100 bytes'",
            ": at most 1024 bytes per name and per value (botocore "
            "ContainerDefinition.Environment)",
        ),
        (
            ("ic_endpoints", 0, "models", 0, "rolling_update", "batch_size"),
            2,
            "inference.ic_endpoints[0].models[0].rolling_update.batch_size=2",
            ": 1-1 copies: 5%-50% of the component's 2 copies",
        ),
    ],
)
def test_container_and_rolling_update_mistakes_are_named_by_their_configuration_key(
    path, value, key, why
):
    mapping = _mapping()
    node = mapping["inference"]
    for step in path[:-1]:
        node = node.setdefault(step, {}) if isinstance(step, str) else node[step]
    node[path[-1]] = value
    with pytest.raises(ValidationError) as error:
        load_config(mapping)
    assert any(line.startswith(key) and why in line for line in error.value.problems), (
        error.value.problems
    )


def test_single_model_variants_take_the_ami_and_ssm_access(every_option):
    config = _one(
        every_option["template"],
        "AWS::SageMaker::EndpointConfig",
        "SingleModelEndpointisolated",
    )
    (variant,) = config["ProductionVariants"]
    assert variant["InferenceAmiVersion"] == "al2-ami-sagemaker-inference-gpu-3-1"
    assert variant["EnableSSMAccess"] is True


def test_a_bad_ami_on_a_single_model_endpoint_is_refused():
    mapping = _mapping()
    mapping["inference"]["single_model_endpoints"][0]["inference_ami_version"] = "al2-gpu"
    with pytest.raises(ValidationError) as error:
        load_config(mapping)
    assert any(
        line.startswith("inference.single_model_endpoints[0].inference_ami_version='al2-gpu'")
        for line in error.value.problems
    ), error.value.problems


# -- single-model pools ---------------------------------------------------------------------


def _resources_of(template: dict[str, Any], kind: str, under: str) -> dict[str, dict[str, Any]]:
    return {
        key: r["Properties"]
        for key, r in template["Resources"].items()
        if r["Type"] == kind and key.startswith(under)
    }


def test_single_model_pools_run_the_variants_model_or_their_own(every_option):
    template = every_option["template"]
    (variant,) = _one(template, "AWS::SageMaker::EndpointConfig", "SingleModelEndpointpooled")[
        "ProductionVariants"
    ]
    assert "InstanceType" not in variant
    models = _resources_of(template, "AWS::SageMaker::Model", "SingleModelEndpointpooled")
    (pool_model,) = [key for key in models if "PoolModelmlinf2xlarge" in key]
    assert variant["InstancePools"] == [
        {"InstanceType": "ml.g5.2xlarge", "Priority": 1},
        {"InstanceType": "ml.g6.2xlarge", "Priority": 2},
        {
            "InstanceType": "ml.inf2.xlarge",
            "Priority": 3,
            "ModelNameOverride": {"Fn::GetAtt": [pool_model, "ModelName"]},
        },
        {
            "InstanceType": "ml.g6e.2xlarge",
            "Priority": 4,
            "ModelNameOverride": "summarizer-g6e-compiled",
        },
    ]
    (main,) = [key for key in models if key != pool_model]
    # The pool's model runs as the variant's model does: same role, isolation and tag.
    for name in ("ExecutionRoleArn", "EnableNetworkIsolation", "Tags"):
        assert models[pool_model][name] == models[main][name]
    assert models[pool_model]["PrimaryContainer"]["Image"].endswith("neuronx-sdk2.20.2")
    # Without artifacts of its own, it reads the endpoint's.
    source = models[pool_model]["PrimaryContainer"]["ModelDataSource"]
    assert source == models[main]["PrimaryContainer"]["ModelDataSource"]


SINGLE_BASE = {"name": "pools", "instance_type": "ml.g5.2xlarge"}
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1"
FIVE = ("ml.g6.2xlarge", "ml.g6e.2xlarge", "ml.g5.4xlarge", "ml.g6.4xlarge", "ml.g6e.4xlarge")


@pytest.mark.parametrize(
    ("pools", "key", "why"),
    [
        (
            [{"instance_type": "ml.g6.2xlarge", "model_name_override": "compiled_g6"}],
            "fallback_pools[0].model_name_override='compiled_g6'",
            "underscores are not allowed; allowed: matching "
            "[a-zA-Z0-9]([\\-a-zA-Z0-9]*[a-zA-Z0-9])?; 0-63 characters",
        ),
        (
            [{"instance_type": "ml.g6.2xlarge", "model_name_override": "m" * 64}],
            "fallback_pools[0].model_name_override='mmm",
            "too long: at most 63 characters, it has 64",
        ),
        (
            [{"instance_type": "ml.g6.2xlarge", "model_name_override": ""}],
            "fallback_pools[0].model_name_override=''",
            "must not be empty",
        ),
        (
            [
                {
                    "instance_type": "ml.g6.2xlarge",
                    "model_name_override": "compiled-g6",
                    "container": {"image": IMAGE},
                }
            ],
            "fallback_pools[0].model_name_override='compiled-g6'",
            "either a container (a model created for the pool) or the name of an existing "
            "model, not both",
        ),
        ([{"instance_type": "ml.g5.2xlarge"}], "fallback_pools='ml.g5.2xlarge'", "must be unique"),
        (
            [{"instance_type": "ml.g9.2xlarge"}],
            "fallback_pools[0]='ml.g9.2xlarge'",
            "not an instance type",
        ),
        (
            [{"instance_type": t} for t in FIVE],
            "fallback_pools=",
            "at most 4 (with instance_type, botocore's InstancePoolList holds 5 pools)",
        ),
        (
            [{"instance_type": "ml.g6.2xlarge", "container": {"model_size_gib": 0}}],
            "fallback_pools[0].container.model_size_gib=0",
            "must be greater than 0",
        ),
    ],
)
def test_bad_single_model_pools_are_refused_by_key(pools, key, why):
    mapping = {"inference": {"single_model_endpoints": [{**SINGLE_BASE, "fallback_pools": pools}]}}
    with pytest.raises(ValidationError) as error:
        load_config(mapping)
    assert any(
        line.startswith(f"inference.single_model_endpoints[0].{key}") and why in line
        for line in error.value.problems
    ), error.value.problems


def test_a_single_model_endpoint_without_pools_names_its_instance_type(every_option):
    (variant,) = _one(
        every_option["template"], "AWS::SageMaker::EndpointConfig", "SingleModelEndpointisolated"
    )["ProductionVariants"]
    assert variant["InstanceType"] == "ml.g5.2xlarge"
    assert "InstancePools" not in variant
