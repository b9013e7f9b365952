"""The app's configuration sources: defaults, a JSON file, a cdk.json context object."""

from __future__ import annotations

import json

import pytest

from fm_platform.app import build_app
from fm_platform.config import AppConfig, ConfigSource, TrainingConfig, config_source, load_config
from tests.support import new_app


def test_defaults_are_the_training_example_and_no_endpoint():
    config = AppConfig.from_context(new_app())
    assert config == AppConfig()
    assert config.inference.endpoint_names == ()
    assert (config.training_stack_name, config.inference_stack_name) == (
        "FmpTraining",
        "FmpInference",
    )


def test_config_file_overrides_the_defaults(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "training": {"availability_zone_id": "usw2-az2", "storage_capacity_gib": 2400},
                "deploy_inference": False,
                "training_stack_name": "LlmTraining",
            }
        )
    )
    config = AppConfig.from_context(new_app(context={"config": str(path)}))
    assert config.training == TrainingConfig(
        availability_zone_id="usw2-az2", storage_capacity_gib=2400
    )
    assert config.deploy_inference is False
    assert config.training_stack_name == "LlmTraining"


def test_context_object_is_read_when_no_file_is_given():
    app = new_app(context={"fm_platform": {"deploy_training": False}})
    assert AppConfig.from_context(app).deploy_training is False


def test_build_app_creates_only_the_stacks_asked_for():
    app = new_app(context={"fm_platform": {"deploy_inference": False}})
    stacks = build_app(app)
    assert stacks.inference is None
    assert stacks.training is not None
    assert [child.node.id for child in app.node.children if child is stacks.training] == [
        "FmpTraining"
    ]


def test_missing_config_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ValueError, match=f"config='{missing}': no such file"):
        AppConfig.from_context(new_app(context={"config": str(missing)}))


def test_config_file_that_is_not_json_is_a_clear_error(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{training: {}}")
    with pytest.raises(ValueError, match=f"config='{path}': not valid JSON"):
        AppConfig.from_context(new_app(context={"config": str(path)}))


def test_unknown_key_names_the_key_and_the_allowed_ones():
    with pytest.raises(ValueError) as error:
        AppConfig.from_mapping({"trainig": {}})
    message = str(error.value)
    assert "trainig={}: unknown key; did you mean training?" in message
    with pytest.raises(ValueError, match="zzz=1: unknown key; allowed keys: training, inference"):
        AppConfig.from_mapping({"zzz": 1})


def test_deploy_flags_must_be_booleans():
    with pytest.raises(ValueError, match="deploy_training='no': must be true or false"):
        AppConfig.from_mapping({"deploy_training": "no"})


def test_json_true_is_not_taken_for_a_number():
    with pytest.raises(ValueError, match="private_subnet_cidr_mask=True: must be an integer"):
        AppConfig.from_mapping({"training": {"private_subnet_cidr_mask": True}})


def test_the_source_of_the_configuration_is_named(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("{}")
    assert config_source(new_app(context={"config": str(path)})).description == (
        f"configuration file {path}"
    )
    assert config_source(new_app(context={"fm_platform": {"deploy_training": False}})) == (
        ConfigSource({"deploy_training": False}, "the fm_platform object in cdk.json's context")
    )
    assert config_source(new_app()).data is None
    assert "built-in defaults" in config_source(new_app()).description


def test_a_file_that_is_not_a_json_object_is_a_clear_error():
    with pytest.raises(ValueError, match=r"configuration=\[1, 2\]: must be a JSON object"):
        load_config([1, 2])
    with pytest.raises(
        ValueError,
        match="training=3: must be a mapping of instance_groups, slurm_accounting, "
        "home_file_system, orchestrator, eks, availability_zone_id",
    ):
        load_config({"training": 3})


def test_a_file_and_an_object_together_are_refused_rather_than_one_silently_winning(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("{}")
    app = new_app(context={"config": str(path), "fm_platform": {"deploy_training": False}})
    with pytest.raises(ValueError, match="and a 'fm_platform' object are both in the context"):
        config_source(app)
