"""The models of an Inference Components endpoint must fit its instances: their minimum
copies on ``max_instance_count`` instances (the endpoint's check rejects them at synth,
once every model of every stack is placed), their initial copies on
``initial_instance_count`` instances (a warning otherwise)."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointAttributes,
)
from fm_platform.constructs.inference.component_scaling import ComponentScaling
from fm_platform.constructs.inference.inference_component import InferenceComponentModel
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.rules import capacity
from fm_platform.rules.capacity import CopyDemand
from tests.components import IMAGE, chat_endpoint, chat_model

WARNING_ID = "fm_platform:initialCopiesExceedInstances"

# The replacement key of an ml.g5.12xlarge endpoint with variant AllTraffic.
KEY = "62e167c0"


def _endpoint(stack: cdk.Stack, **props) -> InferenceComponentEndpoint:
    # ml.g5.12xlarge: 4 GPUs, 48 vCPUs, 196608 MiB per instance.
    return chat_endpoint(stack, instance_type="ml.g5.12xlarge", **props)


def _model(scope, endpoint, name: str, **props) -> InferenceComponentModel:
    """The chat model named ``name`` (its construct ID too), its artifacts under
    ``s3://models/<name>/``."""
    container = ModelContainer(image=IMAGE, model_data_url=f"s3://models/{name}/")
    named = {"model_name": name, "container": container, **props}
    return chat_model(scope, endpoint, construct_id=name, **named)


def _synth_error(app: cdk.App) -> str:
    with pytest.raises(Exception, match="Validation failed") as error:
        app.synth()
    return str(error.value)


def test_minimum_copies_beyond_max_instances_are_rejected_at_synth_with_the_arithmetic():
    app = cdk.App()
    stack = cdk.Stack(app, "Serving")
    endpoint = _endpoint(stack, max_instance_count=2)
    _model(stack, endpoint, "chat", accelerators=2, scaling=ComponentScaling(max_copies=4))
    _model(stack, endpoint, "code", accelerators=1, initial_copies=2)
    _model(
        stack,
        endpoint,
        "large",
        accelerators=2,
        scaling=ComponentScaling(min_copies=3, max_copies=3),
    )
    assert (
        f"[Serving/Endpoint] invalid inference component placement (Serving-chat-{KEY}, "
        f"Serving-code-{KEY}, Serving-large-{KEY}): the minimum copies of the endpoint's "
        "models need more than its max_instance_count (2) instances hold: accelerators: "
        f"Serving-chat-{KEY} 1 x 2 + Serving-code-{KEY} 2 x 1 + Serving-large-{KEY} 3 x 2 = 10 "
        "> 2 instances x 4 (ml.g5.12xlarge) = 8. "
        "Raise the endpoint's max_instance_count, use a larger instance type or lower the "
        "models' minimum copies"
    ) in _synth_error(app)


def test_accelerators_memory_and_cpu_are_each_checked():
    app = cdk.App()
    stack = cdk.Stack(app, "Serving")
    endpoint = _endpoint(stack, max_instance_count=1)
    _model(stack, endpoint, "chat", accelerators=2, cpu_cores=20, min_memory_mib=100000)
    _model(stack, endpoint, "code", accelerators=3, cpu_cores=30, min_memory_mib=100000)
    assert (
        "need more than its max_instance_count (1) instances hold: "
        f"accelerators: Serving-chat-{KEY} 1 x 2 + Serving-code-{KEY} 1 x 3 = 5 > 1 instances x 4 "
        "(ml.g5.12xlarge) = 4; "
        f"CPU cores: Serving-chat-{KEY} 1 x 20 + Serving-code-{KEY} 1 x 30 = 50 > 1 instances x 48 "
        "(ml.g5.12xlarge) = 48; "
        f"MiB of memory: Serving-chat-{KEY} 1 x 100000 + Serving-code-{KEY} 1 x 100000 = 200000 > "
        "1 instances x 196608 (ml.g5.12xlarge) = 196608."
    ) in _synth_error(app)


def test_models_that_scale_to_zero_need_no_capacity_at_their_minimum():
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = _endpoint(stack, min_instance_count=0, initial_instance_count=1)
    for name in ("a", "b", "c"):
        _model(
            stack,
            endpoint,
            name,
            accelerators=4,
            scaling=ComponentScaling(min_copies=0, max_copies=1),
        )
    # three initial copies of 4 GPUs on one initial instance: a warning, not an error
    annotations = Annotations.from_stack(stack)
    annotations.has_warning(
        "/Serving/b",
        Match.string_like_regexp(
            rf"initial_instance_count \(1\) instances hold: accelerators: Serving-a-{KEY} 1 x 4 \+ "
            rf"Serving-b-{KEY} 1 x 4 = 8 > 1 instances x 4 \(ml.g5.12xlarge\) = 4"
        ),
    )
    # warned once, where the initial copies first stop fitting
    annotations.has_no_warning("/Serving/a", Match.string_like_regexp("initial_instance_count"))
    annotations.has_no_warning("/Serving/c", Match.string_like_regexp("initial_instance_count"))


def test_a_model_in_another_stack_counts_against_the_endpoint():
    app = cdk.App()
    serving = cdk.Stack(app, "Serving")
    endpoint = _endpoint(serving, max_instance_count=1)
    _model(serving, endpoint, "chat", accelerators=3)
    tenant = cdk.Stack(app, "Tenant")
    _model(tenant, endpoint, "code", accelerators=2)
    assert "Serving-chat-62e167c0 1 x 3 + Tenant-code-62e167c0 1 x 2 = 5 > 1" in _synth_error(app)


def test_an_imported_endpoint_is_checked_against_the_counts_it_was_given():
    app = cdk.App()
    stack = cdk.Stack(app, "Serving")
    role = iam.Role.from_role_arn(stack, "Role", "arn:aws:iam::123456789012:role/hosting")
    known = InferenceComponentEndpoint.from_endpoint_attributes(
        stack,
        "Known",
        InferenceComponentEndpointAttributes(
            endpoint_name="shared",
            instance_type="ml.g5.12xlarge",
            execution_role=role,
            max_instance_count=1,
        ),
    )
    _model(stack, known, "big", accelerators=4, initial_copies=2)
    assert "Serving-big-62e167c0 2 x 4 = 8 > 1 instances x 4" in _synth_error(app)


def test_an_imported_endpoint_without_known_instance_counts_is_not_checked():
    app = cdk.App()
    stack = cdk.Stack(app, "Serving")
    role = iam.Role.from_role_arn(stack, "Role", "arn:aws:iam::123456789012:role/hosting")
    unknown = InferenceComponentEndpoint.from_endpoint_attributes(
        stack,
        "Unknown",
        InferenceComponentEndpointAttributes(
            endpoint_name="shared", instance_type="ml.g5.12xlarge", execution_role=role
        ),
    )
    _model(stack, unknown, "chat", accelerators=4, initial_copies=3)
    app.synth()
    Annotations.from_stack(stack).has_no_warning("*", Match.string_like_regexp("instances hold"))


def test_models_that_fit_raise_nothing_and_warn_nothing():
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = _endpoint(stack, initial_instance_count=1, max_instance_count=2)
    _model(stack, endpoint, "chat", accelerators=2, scaling=ComponentScaling(max_copies=4))
    _model(stack, endpoint, "code", accelerators=2)
    Annotations.from_stack(stack).has_no_warning("*", Match.string_like_regexp("instances hold"))


def test_deploy_time_values_skip_the_check_and_synthesize():
    stack = cdk.Stack(cdk.App(), "Serving")
    max_instances = cdk.CfnParameter(stack, "MaxInstances", type="Number", default=1)
    memory = cdk.CfnParameter(stack, "MemoryMiB", type="Number", default=16384)
    endpoint = _endpoint(stack, max_instance_count=max_instances.value_as_number)
    _model(stack, endpoint, "chat", accelerators=4, initial_copies=3)
    _model(stack, endpoint, "code", min_memory_mib=memory.value_as_number)
    template = Template.from_stack(stack)
    components = template.find_resources("AWS::SageMaker::InferenceComponent")
    [code] = [
        c
        for c in components.values()
        if c["Properties"]["InferenceComponentName"] == "Serving-code-62e167c0"
    ]
    # memory known only at deploy time: SageMaker's default startup timeouts
    assert "StartupParameters" not in code["Properties"]["Specification"]


def test_a_placement_costs_the_same_however_many_models_the_endpoint_has(monkeypatch):
    stack = cdk.Stack(cdk.App(), "Serving")
    endpoint = _endpoint(stack, initial_instance_count=2, max_instance_count=10)
    rescans = []
    original = capacity.shortfalls

    def counted(demands, *args):
        rescans.append(len(demands))
        return original(demands, *args)

    monkeypatch.setattr(capacity, "shortfalls", counted)
    demands = [
        CopyDemand(
            name=f"m{index:02d}",
            accelerators=1,
            cpu_cores=None,
            min_memory_mib=1024,
            min_copies=1,
            initial_copies=1,
        )
        for index in range(40)
    ]
    for demand in demands:
        endpoint.place(stack, demand)
    # Running sums decide; the arithmetic over every placement is written once, for the
    # one warning (the ninth copy of one GPU is the first beyond 2 instances x 4 GPUs).
    assert rescans == [9]
    [warning] = Annotations.from_stack(stack).find_warning(
        "/Serving", Match.string_like_regexp("initial_instance_count")
    )
    expected = original(demands[:9], "ml.g5.12xlarge", 2, "initial_copies")
    assert "; ".join(expected) in warning.entry.data
    assert endpoint.placements == tuple(demands)
