"""Day-2 changes: each change a user can make that SageMaker cannot apply in place gives a
template in which CloudFormation creates a new endpoint (and components) beside the old
one; each change SageMaker applies in place keeps the endpoint's logical ID. One test per
row of docs/day2-changes.md."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import aws_cdk as cdk

from fm_platform.constructs.inference.async_endpoint import AsyncEndpoint, AsyncEndpointProps
from fm_platform.constructs.inference.component_endpoint import (
    InferenceComponentEndpoint,
    InferenceComponentEndpointProps,
)
from fm_platform.constructs.inference.instance_pools import FallbackPool
from fm_platform.constructs.inference.instance_scaling import InstanceScaling
from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.constructs.inference.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointProps,
)
from fm_platform.constructs.inference.serverless_endpoint import (
    ServerlessEndpoint,
    ServerlessEndpointProps,
)
from fm_platform.constructs.inference.single_model_endpoint import (
    DataCaptureOptions,
    SingleModelEndpoint,
    SingleModelEndpointProps,
    VariantSpec,
)
from tests.components import chat_model
from tests.support import new_app

CONTAINER = ModelContainer(
    image="763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.31.0-lmi13.0.0-cu124",
    model_data_url="s3://models/chat/",
    model_size_gib=13,
)
IC_ENDPOINT = InferenceComponentEndpointProps(instance_type="ml.g5.12xlarge")
SCALING = InstanceScaling(max_instances=3, target_invocations_per_instance=100)
SINGLE = SingleModelEndpointProps(
    model_name="summarizer", instance_type="ml.g5.2xlarge", container=CONTAINER
)


def _resources(build: Any) -> dict[str, dict[str, Any]]:
    stack = cdk.Stack(new_app(), "Serving")
    build(stack)
    resources: dict[str, dict[str, Any]] = cdk.assertions.Template.from_stack(stack).to_json()[
        "Resources"
    ]
    return resources


def _ids(resources: dict[str, dict[str, Any]], kind: str) -> set[str]:
    return {key for key, value in resources.items() if value["Type"] == kind}


def _ic(endpoint_props: InferenceComponentEndpointProps, **model: Any) -> Any:
    def build(stack: cdk.Stack) -> None:
        endpoint = InferenceComponentEndpoint(stack, "Shared", endpoint_props)
        chat_model(stack, endpoint, model_name="chat", **model)

    return _resources(build)


def _single(props: SingleModelEndpointProps) -> Any:
    return _resources(lambda stack: SingleModelEndpoint(stack, "Summarizer", props))


def _names(resources: dict[str, dict[str, Any]]) -> set[str]:
    return {
        value["Properties"]["InferenceComponentName"]
        for value in resources.values()
        if value["Type"] == "AWS::SageMaker::InferenceComponent"
    }


def _replaced(before: dict[str, Any], after: dict[str, Any], kind: str) -> bool:
    """True when no resource of ``kind`` keeps its logical ID: CloudFormation creates the
    new ones, then deletes the old ones once the update has succeeded."""
    old, new = _ids(before, kind), _ids(after, kind)
    return bool(old) and bool(new) and not old & new


ENDPOINT = "AWS::SageMaker::Endpoint"
COMPONENT = "AWS::SageMaker::InferenceComponent"
TARGET = "AWS::ApplicationAutoScaling::ScalableTarget"


# -- replaced: SageMaker refuses the update in place ------------------------------------


def test_ic_instance_type_change_replaces_endpoint_and_components_under_new_names():
    before = _ic(IC_ENDPOINT)
    after = _ic(replace(IC_ENDPOINT, instance_type="ml.g6e.12xlarge"))
    assert _replaced(before, after, ENDPOINT)
    assert _replaced(before, after, COMPONENT)
    # Component names are unique per account and region: the new one needs its own.
    assert _names(before).isdisjoint(_names(after))
    assert all(name.startswith("Serving-chat-") for name in _names(before | after))


def test_ic_variant_rename_replaces_endpoint_and_components():
    before = _ic(IC_ENDPOINT)
    after = _ic(replace(IC_ENDPOINT, variant_name="Primary"))
    assert _replaced(before, after, ENDPOINT)
    assert _replaced(before, after, COMPONENT)
    assert _names(before).isdisjoint(_names(after))


def test_ic_fallback_types_change_replaces_endpoint_and_components():
    before = _ic(IC_ENDPOINT)
    after = _ic(replace(IC_ENDPOINT, fallback_instance_types=["ml.g6e.12xlarge"]))
    assert _replaced(before, after, ENDPOINT)
    assert _replaced(before, after, COMPONENT)
    assert _names(before).isdisjoint(_names(after))


def _two_endpoints(on: str, **model: Any) -> Any:
    """Two endpoints of one instance type and variant (one replacement key), the model on
    the endpoint ``on``."""

    def build(stack: cdk.Stack) -> None:
        endpoints = {n: InferenceComponentEndpoint(stack, n, IC_ENDPOINT) for n in ("A", "B")}
        chat_model(endpoints[on], endpoints[on], **model)

    return _resources(build)


def test_ic_model_moved_with_a_name_suffix_is_a_new_component_under_a_new_name():
    before = _two_endpoints("A")
    after = _two_endpoints("B", name_suffix="b")
    assert _replaced(before, after, COMPONENT)
    assert not _replaced(before, after, ENDPOINT)  # both endpoints stay
    # The same key on both endpoints: only the suffix keeps the names apart.
    assert _names(_two_endpoints("B")) == _names(before)
    assert _names(after) == {name + "-b" for name in _names(before)}


def test_ic_scaled_component_gets_a_new_scalable_target_with_its_new_name():
    from fm_platform.constructs.inference.component_scaling import ComponentScaling

    scaling = ComponentScaling(min_copies=1, max_copies=4, target_value=10)
    before = _ic(IC_ENDPOINT, scaling=scaling)
    after = _ic(replace(IC_ENDPOINT, instance_type="ml.g6e.12xlarge"), scaling=scaling)
    [old] = [after_target for after_target in _ids(before, TARGET)]
    [new] = [after_target for after_target in _ids(after, TARGET)]
    # ResourceId is create-only: the target follows the component's new name.
    assert before[old]["Properties"]["ResourceId"] != after[new]["Properties"]["ResourceId"]


def test_scaled_single_model_instance_type_change_replaces_the_endpoint():
    scaled = replace(SINGLE, scaling=SCALING)
    before = _single(scaled)
    after = _single(replace(scaled, instance_type="ml.g6.2xlarge"))
    assert _replaced(before, after, ENDPOINT)


def test_scaled_single_model_fallback_pools_change_replaces_the_endpoint():
    scaled = replace(SINGLE, scaling=SCALING)
    pooled = replace(scaled, fallback_pools=[FallbackPool(instance_type="ml.g6.2xlarge")])
    assert _replaced(_single(scaled), _single(pooled), ENDPOINT)


def test_unscaled_single_model_fallback_pools_change_updates_in_place():
    pooled = replace(SINGLE, fallback_pools=[FallbackPool(instance_type="ml.g6.2xlarge")])
    assert not _replaced(_single(SINGLE), _single(pooled), ENDPOINT)


def test_scaled_variant_rename_replaces_the_endpoint():
    scaled = replace(SINGLE, scaling=SCALING)
    assert _replaced(_single(scaled), _single(replace(scaled, variant_name="Blue")), ENDPOINT)


def test_adding_a_scaled_variant_replaces_the_endpoint():
    extra = VariantSpec(
        variant_name="Challenger",
        container=CONTAINER,
        instance_type="ml.g5.2xlarge",
        scaling=SCALING,
    )
    before = _single(replace(SINGLE, variants=[replace(extra, scaling=None)]))
    after = _single(replace(SINGLE, variants=[extra]))
    assert _replaced(before, after, ENDPOINT)


def test_scaled_multi_model_instance_type_change_replaces_the_endpoint():
    props = MultiModelEndpointProps(
        instance_type="ml.m5.xlarge", models_s3_prefix="s3://models/small/", scaling=SCALING
    )

    def build(props: MultiModelEndpointProps) -> Any:
        return _resources(lambda stack: MultiModelEndpoint(stack, "Small", props))

    after = build(replace(props, instance_type="ml.c5.xlarge"))
    assert _replaced(build(props), after, ENDPOINT)


def test_scaled_async_instance_type_change_replaces_the_endpoint():
    props = AsyncEndpointProps(
        model_name="batch", instance_type="ml.g5.2xlarge", container=CONTAINER
    )

    def build(props: AsyncEndpointProps) -> Any:
        return _resources(lambda stack: AsyncEndpoint(stack, "Batch", props))

    after = build(replace(props, instance_type="ml.g6.2xlarge"))
    assert _replaced(build(props), after, ENDPOINT)


def test_kind_change_creates_another_endpoint_beside_the_old():
    single = _single(SINGLE)
    asynchronous = _resources(
        lambda stack: AsyncEndpoint(
            stack,
            "Summarizer",
            AsyncEndpointProps(
                model_name="summarizer", instance_type="ml.g5.2xlarge", container=CONTAINER
            ),
        )
    )
    assert _replaced(single, asynchronous, ENDPOINT)


def test_serverless_to_instances_creates_another_endpoint_beside_the_old():
    serverless = _resources(
        lambda stack: ServerlessEndpoint(
            stack,
            "Summarizer",
            # A serverless model reads an archive (botocore: no ModelDataSource there).
            ServerlessEndpointProps(
                model_name="summarizer",
                container=replace(CONTAINER, model_data_url="s3://models/chat/model.tar.gz"),
            ),
        )
    )
    assert _replaced(serverless, _single(SINGLE), ENDPOINT)


# -- in place: SageMaker updates the endpoint to the new config ---------------------------


def _kept(before: dict[str, Any], after: dict[str, Any], kind: str) -> bool:
    return bool(_ids(before, kind)) and _ids(before, kind) == _ids(after, kind)


def test_unscaled_single_model_instance_type_change_updates_in_place():
    assert _kept(_single(SINGLE), _single(replace(SINGLE, instance_type="ml.g6.2xlarge")), ENDPOINT)


def test_data_capture_change_updates_in_place():
    before = _single(SINGLE)
    after = _single(replace(SINGLE, data_capture=DataCaptureOptions(sampling_percentage=20)))
    assert _kept(before, after, ENDPOINT)


def test_network_isolation_change_updates_components_in_place():
    before = _ic(IC_ENDPOINT)
    after = _ic(replace(IC_ENDPOINT, network_isolation=False))
    assert _kept(before, after, ENDPOINT)
    assert _kept(before, after, COMPONENT)


def test_model_change_updates_the_component_in_place():
    before = _ic(IC_ENDPOINT)
    after = _ic(IC_ENDPOINT, container=CONTAINER, min_memory_mib=24576)
    assert _kept(before, after, COMPONENT)
    assert _names(before) == _names(after)


def test_instance_count_and_routing_changes_update_in_place():
    before = _ic(IC_ENDPOINT)
    after = _ic(replace(IC_ENDPOINT, max_instance_count=4, routing_strategy="RANDOM"))
    assert _kept(before, after, ENDPOINT)
    assert _names(before) == _names(after)


def test_async_settings_change_updates_in_place():
    props = AsyncEndpointProps(
        model_name="batch", instance_type="ml.g5.2xlarge", container=CONTAINER
    )

    def build(props: AsyncEndpointProps) -> Any:
        return _resources(lambda stack: AsyncEndpoint(stack, "Batch", props))

    after = build(replace(props, max_concurrent_invocations_per_instance=2))
    assert _kept(build(props), after, ENDPOINT)


def test_weighted_variant_without_scaling_is_added_in_place():
    extra = VariantSpec(
        variant_name="Challenger", container=CONTAINER, instance_type="ml.g5.2xlarge"
    )
    assert _kept(_single(SINGLE), _single(replace(SINGLE, variants=[extra])), ENDPOINT)


def test_a_new_model_on_a_scaled_single_model_endpoint_updates_in_place():
    scaled = replace(SINGLE, scaling=SCALING)
    newer = replace(CONTAINER, model_data_url="s3://models/chat-v2/")
    before, after = _single(scaled), _single(replace(scaled, container=newer))
    assert _kept(before, after, ENDPOINT)
    assert _kept(before, after, TARGET)


def test_a_new_models_prefix_on_a_multi_model_endpoint_updates_in_place():
    props = MultiModelEndpointProps(instance_type="ml.m5.xlarge", models_s3_prefix="s3://models/a/")

    def build(props: MultiModelEndpointProps) -> Any:
        return _resources(lambda stack: MultiModelEndpoint(stack, "Small", props))

    after = build(replace(props, models_s3_prefix="s3://models/b/"))
    assert _kept(build(props), after, ENDPOINT)
