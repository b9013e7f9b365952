"""Updates that provision a second fleet: the change-impact report names the instances and
type the new fleet needs beside the running one (and so the quota), for each endpoint
update SageMaker rolls out on new instances and each replacement; a component update says
where its new copies start."""

from __future__ import annotations

import copy
import sys

from tests.support import ROOT
from tests.test_change_impact import _first_endpoint, inference, only

sys.path.insert(0, str(ROOT / "scripts"))
from change_impact import change_impacts, new_instances  # noqa: E402

QUOTA_FAILS = "must have room for them beside the running ones, or the deploy fails and rolls back"


def _p4de(data):
    data["single_model_endpoints"][0]["instance_type"] = "ml.p4de.24xlarge"


def test_a_new_model_on_a_p4de_endpoint_needs_a_second_p4de_while_it_runs():
    def new_model(data):
        _p4de(data)
        data["single_model_endpoints"][0]["container"] = {"environment": {"A": "1"}}

    impacts = change_impacts(inference(_p4de), inference(new_model))
    updated = only(impacts, "endpoint updated in place")
    assert updated.resource.startswith("FmpInference/SingleModelEndpoint-summarizer/")
    assert updated.what == (
        "endpoint updated in place: new instances are provisioned and traffic moves to them; "
        "its name stays; while it runs, the new instances run beside the old ones: 1 more "
        "ml.p4de.24xlarge; the account's quota 'ml.p4de.24xlarge for endpoint usage' " + QUOTA_FAILS
    )
    assert "UpdateEndpoint (botocore): the configuration is deployed 'to a new fleet" in (
        updated.source
    )
    assert "'<type> for endpoint usage' counts both fleets" in updated.source


def test_an_inference_components_config_change_needs_up_to_its_scaling_maximum():
    impacts = change_impacts(
        inference(), inference(lambda d: _first_endpoint(d, max_instance_count=3))
    )
    updated = only(impacts, "endpoint updated in place")
    assert updated.resource.startswith("FmpInference/IcEndpoint-shared-g5/Endpoint/")
    assert (
        "while it runs, the new instances run beside the old ones: 1 to 3 more ml.g5.12xlarge "
        "(managed instance scaling adds instances up to its maximum as the components' copies "
        "are placed); the account's quota 'ml.g5.12xlarge for endpoint usage' " + QUOTA_FAILS
    ) in updated.what


def test_a_replaced_endpoint_needs_its_new_types_instances_beside_the_old():
    head = inference(lambda d: _first_endpoint(d, instance_type="ml.g5.24xlarge"))
    replaced = only(change_impacts(inference(), head), "endpoint replaced by")
    assert replaced.what.endswith(
        "while it runs, the new instances run beside the old ones: 1 to 2 more ml.g5.24xlarge "
        "(managed instance scaling adds instances up to its maximum as the components' copies "
        "are placed); the account's quota 'ml.g5.24xlarge for endpoint usage' " + QUOTA_FAILS
    )
    assert "counts both fleets" in replaced.source


def test_an_updated_component_says_where_its_new_copies_start():
    def environment(data):
        model = data["ic_endpoints"][0]["models"][0]
        model["container"] = {"environment": {"OPTION_MAX_MODEL_LEN": "4096"}}

    updated = only(change_impacts(inference(), inference(environment)), "component updated")
    assert updated.what.endswith(
        "; its new copies of 1 accelerator each start beside the old ones, all 1 at once "
        "(blue/green): they need free room on the endpoint's instances, else managed instance "
        "scaling adds instances (up to its maximum, within the account's quota for the type) "
        "while the update runs"
    )
    assert "a blue/green update provisions the new copies beside the current ones" in (
        updated.source
    )


# --- the fleet of a hand-written template: rolling updates, pools, serverless ---------


def _template(variants, deployment=None):
    endpoint = {
        "Type": "AWS::SageMaker::Endpoint",
        "Properties": {"EndpointConfigName": {"Ref": "C"}},
    }
    if deployment is not None:
        endpoint["Properties"]["DeploymentConfig"] = deployment
    config = {
        "Type": "AWS::SageMaker::EndpointConfig",
        "Properties": {"ProductionVariants": variants},
    }
    return {"Resources": {"E": endpoint, "C": config}}, endpoint


def test_a_rolling_update_provisions_a_batch_at_a_time():
    variant = {"VariantName": "v", "InstanceType": "ml.g5.2xlarge", "InitialInstanceCount": 4}
    policy = {"MaximumBatchSize": {"Type": "CAPACITY_PERCENT", "Value": 25}}
    template, endpoint = _template([variant], {"RollingUpdatePolicy": policy})
    assert "1 more ml.g5.2xlarge at a time (its rolling update's batch of 4)" in new_instances(
        template, endpoint, rolling=True
    )
    # A replacement is a new endpoint: all of its instances, whatever its update policy.
    assert ": 4 more ml.g5.2xlarge;" in new_instances(template, endpoint, rolling=False)
    counted = copy.deepcopy(policy) | {"MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 2}}
    template, endpoint = _template([variant], {"RollingUpdatePolicy": counted})
    assert "2 more ml.g5.2xlarge at a time" in new_instances(template, endpoint, rolling=True)


def test_a_rolling_policy_on_two_variants_falls_back_to_blue_green():
    # Developer Guide, deployment guardrails 'Exclusions': no rolling update with several
    # variants.
    variants = [
        {"VariantName": "a", "InstanceType": "ml.g5.2xlarge", "InitialInstanceCount": 2},
        {"VariantName": "b", "InstanceType": "ml.g6.2xlarge", "InitialInstanceCount": 1},
    ]
    policy = {"MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1}}
    template, endpoint = _template(variants, {"RollingUpdatePolicy": policy})
    assert new_instances(template, endpoint, rolling=True) == (
        "; while it runs, the new instances run beside the old ones: 2 more ml.g5.2xlarge and "
        "1 more ml.g6.2xlarge; the account's quota 'ml.g5.2xlarge for endpoint usage', "
        "'ml.g6.2xlarge for endpoint usage' " + QUOTA_FAILS
    )


def test_pools_name_the_fallback_types_and_serverless_needs_no_instances():
    pools = [
        {"InstanceType": "ml.g6e.2xlarge", "Priority": 2},
        {"InstanceType": "ml.g5.2xlarge", "Priority": 1},
    ]
    template, endpoint = _template(
        [{"VariantName": "v", "InitialInstanceCount": 1, "InstancePools": pools}]
    )
    assert "1 more ml.g5.2xlarge (or of its fallback types ml.g6e.2xlarge);" in new_instances(
        template, endpoint, rolling=True
    )
    serverless = {
        "VariantName": "v",
        "ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5},
    }
    template, endpoint = _template([serverless])
    assert new_instances(template, endpoint, rolling=True) == ""


def test_a_component_with_a_rolling_update_starts_a_batch_of_copies_at_a_time():
    def component(image, batch=None):
        properties = {
            "EndpointName": "e",
            "Specification": {
                "Container": {"Image": image},
                "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 2},
            },
            "RuntimeConfig": {"CopyCount": 4},
        }
        if batch is not None:
            policy = {"MaximumBatchSize": batch, "WaitIntervalInSeconds": 60}
            properties["DeploymentConfig"] = {"RollingUpdatePolicy": policy}
        resource = {"Type": "AWS::SageMaker::InferenceComponent", "Properties": properties}
        return {"S": {"Resources": {"C": resource}}}

    for batch, said in (
        ({"Type": "COPY_COUNT", "Value": 1}, "1 copy at a time (its rolling update's batch)"),
        ({"Type": "CAPACITY_PERCENT", "Value": 25}, "25% of its copies at a time"),
        (None, "all 4 at once (blue/green)"),
    ):
        updated = only(change_impacts(component("a"), component("b", batch)), "updated")
        assert f"its new copies of 2 accelerators each start beside the old ones, {said}" in (
            updated.what
        )
