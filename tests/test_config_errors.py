"""A whole configuration checked at once: every problem of the mapping and of the
constructs it describes, named by configuration key, in one message and without a
traceback from the CDK CLI."""

from __future__ import annotations

import json
import subprocess

import pytest

from fm_platform.config import (
    AppConfig,
    InferenceComponentEndpointConfig,
    InferenceConfig,
    load_config,
)
from fm_platform.constructs.inference.inference_component import InferenceComponentModelOptions
from fm_platform.rules.problems import ValidationError
from tests.conftest import CDK_CLI, synth_env
from tests.support import ROOT, new_app

CONTROLLER = {
    "name": "controller",
    "role": "controller",
    "instance_type": "ml.m5.12xlarge",
    "instance_count": 1,
}

#: Eight mistakes across training and inference.
BAD_CONFIG = {
    "training": {
        "availabilty_zone_id": "use1-az4",
        "storage_capacity_gib": 1000,
        "private_subnet_cidr_mask": 26,
        "instance_groups": [
            CONTROLLER,
            {
                "name": "workers",
                "role": "worker",
                "instance_type": "ml.p5.48xl",
                "instance_count": 4,
                "partition": "dev",
            },
            {
                "name": "gpus",
                "role": "worker",
                "instance_type": "ml.p5.48xlarge",
                "instance_count": 4,
                "partition": "gpu",
            },
        ],
    },
    "inference": {
        "ic_endpoints": [
            {
                "name": "shared",
                "instance_type": "ml.g5.12xlarge",
                "models": [{"model_name": "big", "accelerators": 8, "min_memory_mib": 1024}],
            },
            {
                "name": "other",
                "instance_type": "ml.g5.13xlarge",
                "min_instance_count": 3,
                "models": [{"model_name": "small", "accelerators": 1, "min_memory_mib": 1024}],
            },
        ],
        "single_model_endpoints": [
            {
                "name": "summarizer",
                "instance_type": "ml.g5.2xlarge",
                "data_capture": {"sampling_percentage": 150},
            }
        ],
        "multi_model_endpoints": [],
    },
}

# The replacement key of an ml.g5.xlarge endpoint with variant AllTraffic.
KEY = "44e58056"


def problem_lines(data) -> list[str]:
    with pytest.raises(ValidationError) as error:
        load_config(data)
    return list(error.value.problems)


def test_every_mistake_of_a_configuration_is_reported_at_once_by_config_key():
    lines = problem_lines(BAD_CONFIG)
    assert lines == [
        "training.availabilty_zone_id='use1-az4': unknown key; did you mean availability_zone_id?",
        "training.storage_capacity_gib=1000: PERSISTENT_2 SSD storage must be 1200, 2400, or "
        "a multiple of 2400 GiB",
        "training.instance_groups[1].instance_type='ml.p5.48xl': not supported: not among the "
        "209 values of botocore's ClusterInstanceType; did you mean ml.p5.48xlarge or "
        "ml.p5e.48xlarge?",
        "training.private_subnet_cidr_mask=26: 59 usable addresses, but the instance groups "
        "need at least 145 (one per instance and per EFA interface, plus 16 spare; counting "
        "only the groups whose instance type and count are known, not workers); use a /24 "
        "subnet or a larger one (a mask of 24 or less)",
        "inference.ic_endpoints[0].models[0].accelerators=8 (model 'big' on endpoint "
        "'shared'): at most 4 (nvidia-gpu devices on one ml.g5.12xlarge)",
        "inference.ic_endpoints[1].instance_type='ml.g5.13xlarge' (endpoint 'other'): not an "
        "instance type SageMaker hosting offers (botocore enum ProductionVariantInstanceType); "
        "did you mean ml.g5.12xlarge, ml.g5.16xlarge or ml.g5.xlarge?",
        "inference.ic_endpoints[1].min_instance_count=3 (endpoint 'other'): must not exceed "
        "max_instance_count (2)",
        "inference.single_model_endpoints[0].data_capture.sampling_percentage=150 (endpoint "
        "'summarizer'): must be between 0 and 100",
    ]
    assert not any("Props" in line for line in lines)  # no internal class names


def test_a_misspelled_type_and_other_network_mistakes_hide_no_group_from_the_subnet_check():
    # One pass: the misspelled group is left out of the count (its addresses per instance
    # are unknown), the 16 ml.p5.48xlarge (32 EFA interfaces each) are still counted, and
    # neither a bad zone ID nor a bad VPC block hides the subnet's shortfall.
    data = {
        "deploy_inference": False,
        "training": {
            "availability_zone_id": "use1-az",
            "vpc_cidr": "10.0.0.0/33",
            "storage_capacity_gib": 1000,
            "private_subnet_cidr_mask": 26,
            "instance_groups": [
                CONTROLLER,
                {
                    "name": "workers",
                    "role": "worker",
                    "instance_type": "ml.p5.48xl",
                    "instance_count": 4,
                    "partition": "dev",
                },
                {
                    "name": "gpus",
                    "role": "worker",
                    "instance_type": "ml.p5.48xlarge",
                    "instance_count": 16,
                    "partition": "gpu",
                    "threads_per_core": 3,
                },
            ],
        },
    }
    lines = problem_lines(data)
    assert lines[-1] == (
        "training.private_subnet_cidr_mask=26: 59 usable addresses, but the instance groups "
        "need at least 529 (one per instance and per EFA interface, plus 16 spare; counting "
        "only the groups whose instance type and count are known, not workers); use a /22 "
        "subnet or a larger one (a mask of 22 or less)"
    )
    assert [line.split("=")[0] for line in lines] == [
        "training.availability_zone_id",
        "training.vpc_cidr",
        "training.storage_capacity_gib",
        "training.instance_groups[1].instance_type",
        "training.instance_groups[2].threads_per_core",
        "training.private_subnet_cidr_mask",
    ]


def test_a_misspelled_or_mistyped_key_hides_nothing_else_of_its_item():
    data = {
        "inference": {
            "ic_endpoints": [
                {"name": "broken", "instance_type": 5, "max_instnce_count": 3, "models": []},
                {
                    "name": "ok",
                    "instance_type": "ml.g5.xlarge",
                    "min_instance_count": 3,
                    "models": [
                        {
                            "model_name": "m",
                            "accelerators": "2",
                            "min_memory_mib": 1024,
                            "cpu_cores": 64,
                            "scaling": {"max_copies": 2, "min_copy": 1, "target_value": 0},
                        }
                    ],
                },
            ],
            "single_model_endpoints": [
                {"name": "s", "instance_type": "ml.m5.large", "x": 1, "initial_instance_count": 0}
            ],
        },
        "deploy_training": False,
    }
    assert problem_lines(data) == [
        "inference.ic_endpoints[0].max_instnce_count=3: unknown key; did you mean "
        "max_instance_count?",
        "inference.ic_endpoints[0].instance_type=5: must be a string",
        "inference.ic_endpoints[1].models[0].accelerators='2': must be an integer",
        "inference.ic_endpoints[1].models[0].scaling.min_copy=1: unknown key; did you mean "
        "min_copies?",
        "inference.single_model_endpoints[0].x=1: unknown key; allowed keys: name, "
        "model_name, alarms, instance_type, container, "
        "initial_instance_count, variant_name, initial_weight, scaling, variants, "
        "shadow_variant, data_capture, fallback_pools, network_isolation, endpoint_name, "
        "model_data_download_timeout_s, container_startup_health_check_timeout_s, "
        "volume_size_gb, inference_ami_version, enable_ssm_access",
        "inference.ic_endpoints[1].min_instance_count=3 (endpoint 'ok'): must not exceed "
        "max_instance_count (2)",
        "inference.ic_endpoints[1].models[0].cpu_cores=64 (model 'm' on endpoint 'ok'): at "
        "most 4 (vCPUs of one ml.g5.xlarge)",
        "inference.ic_endpoints[1].models[0].scaling.target_value=0 (model 'm' on endpoint "
        "'ok'): must be greater than 0",
        "inference.single_model_endpoints[0].variant.initial_instance_count=0 (endpoint 's'): "
        "must be at least 1",
    ]


def test_the_keys_removed_in_0_4_0_are_refused_as_unknown():
    with pytest.raises(ValidationError) as error:
        load_config(
            {
                "training": {"lifecycle_assets_path": "my-scripts"},
                "inference": {
                    "single_model_endpoints": [
                        {"name": "s", "instance_type": "ml.m5.large", "data_capture_percentage": 5}
                    ]
                },
            }
        )
    message = str(error.value)
    assert "training.lifecycle_assets_path='my-scripts': unknown key" in message
    assert "single_model_endpoints[0].data_capture_percentage=5: unknown key" in message


def test_a_stack_not_deployed_is_not_checked():
    data = {"deploy_training": False, "training": {"storage_capacity_gib": 1000}}
    assert load_config(data).deploy_training is False


def test_a_configuration_built_in_code_is_checked_the_same_way():
    model = InferenceComponentModelOptions(model_name="m", accelerators=5, min_memory_mib=1024)
    config = AppConfig(
        deploy_training=False,
        inference=InferenceConfig(
            ic_endpoints=(
                InferenceComponentEndpointConfig(
                    name="e", instance_type="ml.g5.12xlarge", models=(model,)
                ),
            ),
            single_model_endpoints=(),
            multi_model_endpoints=(),
        ),
    )
    with pytest.raises(ValidationError) as error:
        config.check()
    assert error.value.problems == (
        "inference.ic_endpoints[0].models[0].accelerators=5 (model 'm' on endpoint 'e'): "
        "at most 4 (nvidia-gpu devices on one ml.g5.12xlarge)",
    )


def test_a_string_given_for_the_context_object_explains_the_two_ways_that_work():
    app = new_app(context={"fm_platform": '{"deploy_training": false}'})
    with pytest.raises(ValidationError) as error:
        AppConfig.from_context(app)
    (line,) = error.value.problems
    assert line.startswith("""fm_platform='{"deploy_training": false}': a `-c fm_platform""")
    assert "pass `-c config=FILE`" in line
    assert 'put the object itself under "fm_platform" in cdk.json\'s "context"' in line


@pytest.mark.slow
def test_cdk_synth_with_a_bad_configuration_prints_the_problems_without_a_traceback(tmp_path):
    config = tmp_path / "bad.json"
    config.write_text(json.dumps(BAD_CONFIG))
    result = subprocess.run(
        [
            *(str(CDK_CLI), "synth", "--quiet", "--no-notices", "-c", f"config={config}"),
            *("--output", str(tmp_path / "cdk.out")),
        ],
        cwd=ROOT,
        env=synth_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert f"fm_platform: using configuration file {config}" in output
    assert "fm_platform: invalid configuration:" in output
    for key in (
        "training.storage_capacity_gib=1000",
        "training.instance_groups[1].instance_type='ml.p5.48xl'",
        "inference.ic_endpoints[1].instance_type='ml.g5.13xlarge'",
        "inference.single_model_endpoints[0].data_capture.sampling_percentage=150",
    ):
        assert f"  - {key}" in output


def test_endpoint_and_model_names_are_named_by_position():
    model = {"model_name": "m", "accelerators": 1, "min_memory_mib": 1024}
    data = {
        "deploy_training": False,
        "inference": {
            "ic_endpoints": [
                {"name": "a", "instance_type": "ml.g5.xlarge", "models": [model]},
                {"name": "b_c", "instance_type": "ml.g5.xlarge", "models": [model]},
            ],
            "single_model_endpoints": [{"name": "a", "instance_type": "ml.m5.large"}],
            "multi_model_endpoints": [],
        },
    }
    lines = problem_lines(data)
    assert lines == [
        "inference.ic_endpoints[1].name='b_c': underscores are not allowed; "
        "allowed: matching [a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}; 0-63 characters",
        "inference.single_model_endpoints[0].name='a': must be unique among the endpoint names",
        "inference.ic_endpoints[1].models[0].model_name='m': must be unique: it names the "
        "inference component, and those are unique per account and region",
        f"inference.ic_endpoints[1].models[0].component_name='FmpInference-m-{KEY}' (model 'm' on "
        "endpoint 'b_c'): must be unique on the endpoint and in the stack (component names are "
        "unique per account and region); another component already uses it",
    ]


def test_minimum_copies_beyond_the_endpoints_instances_are_named_by_key():
    # Two one-GPU models keeping 3 copies each need 6 GPUs; one ml.g5.12xlarge has 4.
    models = [
        {"model_name": name, "accelerators": 1, "min_memory_mib": 1024, "initial_copies": 3}
        for name in ("first", "second")
    ]
    data = {
        "deploy_training": False,
        "inference": {
            "ic_endpoints": [
                {
                    "name": "tight",
                    "instance_type": "ml.g5.12xlarge",
                    "initial_instance_count": 1,
                    "max_instance_count": 1,
                    "models": models,
                }
            ],
            "single_model_endpoints": [],
            "multi_model_endpoints": [],
        },
    }
    with pytest.raises(ValidationError) as error:
        load_config(data)
    (line,) = error.value.problems
    assert line.startswith(
        "inference.ic_endpoints[0].models[1].initial_copies=3 (model 'second' on endpoint "
        "'tight'): the minimum copies of the endpoint's models need more than its "
        "max_instance_count (1) instances hold"
    )


def test_a_name_suffix_beside_a_component_name_is_named_by_key():
    models = [
        {"model_name": "m", "accelerators": 1, "min_memory_mib": 1024, "name_suffix": "b"},
        {
            "model_name": "n",
            "accelerators": 1,
            "min_memory_mib": 1024,
            "component_name": "n-v2",
            "name_suffix": "b",
        },
    ]
    data = {
        "deploy_training": False,
        "inference": {
            "ic_endpoints": [{"name": "b", "instance_type": "ml.g5.12xlarge", "models": models}],
            "single_model_endpoints": [],
            "multi_model_endpoints": [],
            "async_endpoints": [],
        },
    }
    assert problem_lines(data) == [
        "inference.ic_endpoints[0].models[1].name_suffix='b' (model 'n' on endpoint 'b'): "
        "applies to the default component name only; component_name 'n-v2' is used as given: "
        "put the suffix into it, or drop one",
    ]
