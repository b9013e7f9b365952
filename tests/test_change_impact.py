"""What a change does to running things (scripts/change_impact.py), each case a pair of
configurations built in-process (stacks without the compliance packs, to keep it fast),
checking the printed lines and their sources; a refused change fails `make diff`."""

from __future__ import annotations

import copy
import json
import sys
from functools import cache

import pytest

from fm_platform.config import load_config
from fm_platform.stacks import InferenceStack, TrainingStack
from tests.support import ROOT, new_app

sys.path.insert(0, str(ROOT / "scripts"))

from change_impact import (  # noqa: E402
    Impact,
    change_impacts,
    create_only,
    markdown_lines,
    report_lines,
)
from diff_stacks import exit_status  # noqa: E402

#: What `cdk synth` adds and an in-process App does not: the construct paths the report names.
CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True}
WORKERS = {
    "name": "workers",
    "role": "worker",
    "instance_type": "ml.trn1.32xlarge",
    "instance_count": 4,
    "partition": "dev",
}
CONTROLLER = {
    "name": "controller",
    "role": "controller",
    "instance_type": "ml.m5.12xlarge",
    "instance_count": 1,
}


@cache
def _training(text: str) -> dict[str, dict]:
    config = load_config({"training": json.loads(text), "deploy_inference": False})
    app = new_app(context=CLI_CONTEXT)
    TrainingStack(app, "FmpTraining", config=config.training)
    return {stack.stack_name: stack.template for stack in app.synth().stacks}


def training(**keys: object) -> dict[str, dict]:
    """The training stacks' templates for the training keys ``keys``."""
    data = {"availability_zone_id": "use1-az4", "slurm_mode": "managed", **keys}
    return _training(json.dumps(data, sort_keys=True))


@cache
def _inference(text: str) -> dict[str, dict]:
    config = load_config({"deploy_training": False, "inference": json.loads(text)})
    app = new_app(context=CLI_CONTEXT)
    InferenceStack(app, "FmpInference", config=config.inference)
    return {stack.stack_name: stack.template for stack in app.synth().stacks}


#: The default inference configuration, as a mapping to edit.
DEFAULT_INFERENCE = {
    "ic_endpoints": [
        {
            "name": "shared-g5",
            "instance_type": "ml.g5.12xlarge",
            "models": [
                {"model_name": "llama-7b-chat", "accelerators": 1, "min_memory_mib": 32768},
                {"model_name": "flan-t5-xl", "accelerators": 1, "min_memory_mib": 16384},
            ],
        },
        {
            "name": "spare",
            "instance_type": "ml.g5.12xlarge",
            "models": [{"model_name": "llama-13b", "accelerators": 2, "min_memory_mib": 65536}],
        },
    ],
    "single_model_endpoints": [
        {"name": "summarizer", "model_name": "summarizer", "instance_type": "ml.g5.2xlarge"}
    ],
    "multi_model_endpoints": [],
    "async_endpoints": [],
}


def inference(edit=None) -> dict[str, dict]:
    """The inference stacks' templates for the default inference keys, after ``edit``."""
    data = copy.deepcopy(DEFAULT_INFERENCE)
    if edit is not None:
        edit(data)
    return _inference(json.dumps(data, sort_keys=True))


def lines(impacts: list[Impact]) -> list[str]:
    return [f"{i.resource}: {i.what}" for i in impacts]


def only(impacts: list[Impact], word: str) -> Impact:
    [found] = [i for i in impacts if word in i.what]
    return found


# --- training -------------------------------------------------------------------------


def test_nothing_changes_for_the_same_configuration():
    assert change_impacts(training(), training()) == []
    assert report_lines([]) == ["  nothing running changes"]


def test_a_renamed_and_retyped_worker_group_terminates_and_creates_nodes():
    # The example: workers (4 x trn1.32xlarge) -> gpu (2 x p5.48xlarge).
    gpu = {**WORKERS, "name": "gpu", "instance_type": "ml.p5.48xlarge", "instance_count": 2}
    impacts = change_impacts(training(), training(instance_groups=[CONTROLLER, gpu]))
    rename = only(impacts, "instance group workers -> gpu")
    assert rename.resource == "FmpTraining/Cluster/Resource"
    assert rename.what == (
        "instance group workers -> gpu: a new name is a new group: the 4 x ml.trn1.32xlarge "
        "nodes of workers are terminated (with the jobs on them) and 2 x ml.p5.48xlarge nodes "
        "of gpu are created"
    )
    assert "InstanceGroupsToDelete" in rename.source and not rename.refused


def test_continuous_provisioning_on_an_existing_cluster_is_refused():
    impacts = change_impacts(training(), training(node_provisioning="continuous"))
    refused = only(impacts, "node provisioning standard -> Continuous")
    assert refused.refused and "Continuous provisioning for enhanced cluster" in refused.source
    assert "keep node_provisioning as deployed" in refused.steps
    assert exit_status([], impacts) == 2


def test_more_workers_and_new_lifecycle_scripts_reach_only_new_nodes():
    more = {**WORKERS, "instance_count": 6}
    head = training(instance_groups=[CONTROLLER, more], shared_users=[{"name": "ann", "uid": 2001}])
    impacts = change_impacts(training(), head)
    assert only(impacts, "workers: 4 -> 6").what == (
        "instance group workers: 4 -> 6: 2 ml.trn1.32xlarge nodes are created"
    )
    scripts = only(impacts, "the lifecycle scripts")
    assert scripts.what.startswith("the lifecycle scripts (5 running nodes keep what they ran)")
    assert "apply only to nodes created from now on" in scripts.what
    assert "ClusterLifeCycleConfig" in scripts.source


def test_fewer_workers_say_who_chooses_the_terminated_nodes():
    fewer = {**WORKERS, "instance_count": 2}
    impacts = change_impacts(training(), training(instance_groups=[CONTROLLER, fewer]))
    assert "2 nodes are terminated, chosen by HyperPod" in only(impacts, "4 -> 2").what


def test_a_group_added_and_removed():
    extra = {**WORKERS, "name": "cpu", "instance_type": "ml.c5.4xlarge", "instance_count": 3}
    base, head = training(), training(instance_groups=[CONTROLLER, WORKERS, extra])
    assert lines(change_impacts(base, head)) == [
        "FmpTraining/Cluster/Resource: instance group cpu added: 3 x ml.c5.4xlarge nodes are "
        "created (billed from their start)"
    ]
    removed = only(change_impacts(head, base), "instance group cpu removed")
    assert removed.what.endswith(
        "its 3 x ml.c5.4xlarge nodes are terminated, with the jobs on them"
    )


def test_a_running_groups_instance_type_is_refused_with_the_steps():
    retyped = {**WORKERS, "instance_type": "ml.p5.48xlarge"}
    impacts = change_impacts(training(), training(instance_groups=[CONTROLLER, retyped]))
    refused = only(impacts, "instance type ml.trn1.32xlarge -> ml.p5.48xlarge")
    assert refused.refused and "add a group with the new type under a new name" in refused.steps


def test_a_new_vpc_replaces_the_cluster_and_its_nodes():
    impacts = change_impacts(training(), training(vpc_cidr="10.1.0.0/16"))
    cluster = only(impacts, "CloudFormation replaces the cluster")
    assert cluster.what.startswith("VpcConfig (FmpTrainingData/Network/Vpc/PrivateSubnet1/Subnet")
    assert "every node (controller: 1 x ml.m5.12xlarge, workers: 4 x ml.trn1.32xlarge)" in (
        cluster.what
    )
    assert "createOnlyProperties" in cluster.source and not cluster.refused
    assert ("VpcConfig",) in create_only("AWS::SageMaker::Cluster")
    # The file system sits in that subnet too: a new, empty one.
    file_system = only(impacts, "CloudFormation replaces the file system")
    assert file_system.what.startswith("SubnetIds (FmpTrainingData/Network/Vpc/PrivateSubnet1")
    assert "the old one (retained) keeps the data" in file_system.what


def test_a_new_vpc_for_a_named_cluster_is_refused():
    base = training(cluster_name="research")
    impacts = change_impacts(base, training(cluster_name="research", vpc_cidr="10.1.0.0/16"))
    refused = only(impacts, "CloudFormation replaces the cluster")
    assert refused.refused and "new cluster_name" in refused.steps


def test_the_file_system_grows_in_place_and_cannot_shrink():
    base, head = (
        training(),
        training(storage_capacity_gib=2400, per_unit_storage_throughput_mbps=500),
    )
    grow = change_impacts(base, head)
    storage = only(grow, "storage 1200 -> 2400 GiB")
    assert "grows in place" in storage.what and "Managing storage capacity" in storage.source
    throughput = only(grow, "throughput")
    assert throughput.what.startswith("throughput 250 -> 500 MB/s/TiB: changes in place")
    assert "Managing throughput capacity" in throughput.source
    shrink = only(change_impacts(head, base), "storage 2400 -> 1200 GiB")
    assert shrink.refused and "keep storage_capacity_gib at 2400 or more" in shrink.steps


def test_accounting_attached_and_detached():
    base = training(slurm_mode="managed", node_provisioning="continuous")
    head = training(slurm_mode="managed", node_provisioning="continuous", slurm_accounting=True)
    attach = only(change_impacts(base, head), "slurmdbd moves to the external")
    assert "accounting database" in attach.source and not attach.refused
    detach = only(change_impacts(head, base), "accounting database is detached")
    assert detach.refused and "keep slurm_accounting on" in detach.steps


def test_alarms_removed_are_named():
    impacts = change_impacts(training(), training(lifecycle_error_alarm=False))
    alarm = only(impacts, "alarm removed")
    assert alarm.resource == "FmpTraining/Observability/LifecycleErrors/Alarm/Resource"
    assert alarm.what.startswith("alarm removed: nobody is told any more")


# --- inference ------------------------------------------------------------------------


def _first_endpoint(data, **changes):
    data["ic_endpoints"][0].update(changes)


def test_another_instance_type_under_inference_components_replaces_endpoint_and_components():
    # SageMaker refuses the instance type of an endpoint with components in place ("Cannot
    # update endpoint with a different instance type"); the endpoint's and components'
    # replacement key makes the change a new endpoint and new components beside the old.
    head = inference(lambda d: _first_endpoint(d, instance_type="ml.g5.24xlarge"))
    impacts = change_impacts(inference(), head)
    assert not [i for i in impacts if i.refused]
    replaced = only(impacts, "endpoint replaced by FmpInference/IcEndpoint-shared-g5/Endpoint/")
    assert replaced.resource == "FmpInference/IcEndpoint-shared-g5/Endpoint/Endpoint62e167c0"
    assert "(instance type ml.g5.12xlarge -> ml.g5.24xlarge)" in replaced.what
    assert "; the new name is in the output EndpointSharedG5; while it runs" in replaced.what
    component = only(impacts, "Model-llama-7b-chat/Component")
    assert component.what.startswith("component replaced by FmpInference/IcEndpoint-shared-g5/")
    assert "callers that name the component read the new name" in component.what
    assert "its copies start at 1 (its initial count)" in component.what


def test_a_single_model_endpoints_new_name_is_given_by_its_output():
    def rename(data):
        data["single_model_endpoints"][0]["endpoint_name"] = "summaries"

    impacts = change_impacts(inference(), inference(rename))
    replaced = only(impacts, "endpoint replaced")
    assert replaced.what == (
        "endpoint replaced: its name changes for every caller; the new name is in the output "
        "EndpointSummarizer; while it runs, the new instances run beside the old ones: 1 more "
        "ml.g5.2xlarge; the account's quota 'ml.g5.2xlarge for endpoint usage' must have room "
        "for them beside the running ones, or the deploy fails and rolls back"
    )


def test_an_updated_component_resets_its_copies():
    def environment(data):
        model = data["ic_endpoints"][0]["models"][0]
        model["container"] = {"environment": {"OPTION_MAX_MODEL_LEN": "4096"}}

    impacts = change_impacts(inference(), inference(environment))
    updated = only(impacts, "component updated")
    assert updated.resource == (
        "FmpInference/IcEndpoint-shared-g5/Model-llama-7b-chat/Component62e167c0"
    )
    assert updated.what.startswith("component updated: its running copies are set to 1")
    assert "write-only" in updated.source


def test_a_model_moved_to_another_endpoint_under_the_same_name_is_refused():
    # Both endpoints have the same instance type and variant, so the same replacement key:
    # the moved component keeps its name, which cannot be created while the old one exists.
    def move(data):
        model = data["ic_endpoints"][0]["models"].pop(1)
        data["ic_endpoints"][1]["models"].append(model)

    impacts = change_impacts(inference(), inference(move))
    moved = only(impacts, "model moves to")
    assert moved.resource == (
        "FmpInference/IcEndpoint-shared-g5/Model-flan-t5-xl/Component62e167c0"
    )
    assert "FmpInference/IcEndpoint-spare/Model-flan-t5-xl/Component" in moved.what
    assert moved.refused and moved.steps.startswith("give the moved model a name of its own")
    assert "name_suffix" in moved.steps


def test_a_model_moved_with_a_name_suffix_gets_a_new_component_under_its_new_name():
    # The suffix gives the moved component a name of its own: it is created beside the
    # running one, which is deleted once the update has succeeded.
    def move(data):
        model = data["ic_endpoints"][0]["models"].pop(1)
        data["ic_endpoints"][1]["models"].append({**model, "name_suffix": "spare"})

    impacts = change_impacts(inference(), inference(move))
    moved = only(impacts, "model moves to")
    assert not moved.refused
    assert moved.what == (
        "model moves to FmpInference/IcEndpoint-spare/Model-flan-t5-xl/Component62e167c0: a "
        "new component FmpInference-flan-t5-xl-62e167c0-spare is created under a new name and "
        "this one deleted once it is in service; callers that name the component read the new "
        "name (in the output ComponentsSpare); its copies start at 1 (its initial count) and "
        "autoscaling moves on from there"
    )


def test_an_explicit_endpoint_name_on_a_replaced_endpoint_is_refused():
    # The replacement endpoint is created before the old one is deleted: not under its name.
    def retype(data):
        _first_endpoint(data, instance_type="ml.g5.24xlarge", endpoint_name="shared")

    impacts = change_impacts(
        inference(lambda d: _first_endpoint(d, endpoint_name="shared")), inference(retype)
    )
    replaced = only(impacts, "under the same endpoint name shared")
    assert replaced.refused
    assert replaced.what.startswith("endpoint replaced by FmpInference/IcEndpoint-shared-g5/")
    assert replaced.steps.startswith("change endpoint_name together with the instance type")


def test_an_explicit_component_name_on_a_replaced_endpoint_is_refused():
    def named(data):
        data["ic_endpoints"][0]["models"][0]["component_name"] = "chat"

    def retype(data):
        named(data)
        _first_endpoint(data, instance_type="ml.g5.24xlarge")

    impacts = change_impacts(inference(named), inference(retype))
    replaced = only(impacts, "under the same component name chat")
    assert replaced.refused
    assert replaced.what.startswith("component replaced by FmpInference: ")
    assert replaced.steps.startswith("give the model a new component_name together with")


def test_a_model_moved_to_an_endpoint_of_another_type_gets_a_new_component():
    def move(data):
        model = data["ic_endpoints"][0]["models"].pop(1)
        data["ic_endpoints"][1]["models"].append(model)
        data["ic_endpoints"][1]["instance_type"] = "ml.g5.24xlarge"

    impacts = change_impacts(inference(), inference(move))
    moved = only(impacts, "model moves to")
    assert moved.resource == (
        "FmpInference/IcEndpoint-shared-g5/Model-flan-t5-xl/Component62e167c0"
    )
    assert "FmpInference/IcEndpoint-spare/Model-flan-t5-xl/Component" in moved.what
    assert not moved.refused and "is created under a new name" in moved.what


def test_an_endpoint_removed_names_its_callers_break():
    def drop(data):
        data["ic_endpoints"].pop(1)

    impacts = change_impacts(inference(), inference(drop))
    removed = only(impacts, "endpoint removed")
    assert removed.resource.startswith("FmpInference/IcEndpoint-spare/Endpoint/Endpoint")
    assert "callers using its name get errors" in removed.what


def test_the_report_puts_refusals_first_with_what_to_do_and_markdown_lists_them():
    impacts = [
        Impact("S", "r1", "fine", "src"),
        Impact("S", "r2", "no", "src2", refused=True, steps="do this"),
    ]
    assert report_lines(impacts) == [
        "  REFUSED S: r2: no\n      what to do: do this\n      source: src2",
        "  S: r1: fine\n      source: src",
    ]
    assert markdown_lines(impacts)[1] == "**What happens to running things**"
    assert "- **Refused** `S` `r2`: no (src2)" in markdown_lines(impacts)
    assert "  - What to do: do this" in markdown_lines(impacts)
    assert exit_status([], impacts[:1]) == 0


@pytest.mark.parametrize("kind", ["AWS::FSx::FileSystem", "AWS::RDS::DBCluster"])
def test_create_only_properties_come_from_the_schemas(kind):
    assert ("KmsKeyId",) in create_only(kind)
