"""The fit check (a request against one instance) and the instance data regeneration script."""

from __future__ import annotations

import json
import sys

import boto3
import pytest
from botocore.stub import Stubber

from fm_platform.rules.capacity import check_fit
from fm_platform.rules.hosting import check_hosting_instance_type
from fm_platform.rules.problems import Problems
from tests.support import ROOT


def _problems(instance_type: str, **request) -> tuple[str, ...]:
    problems = Problems("test")
    request = {"accelerators": 0, "cpu_cores": None, "min_memory_mib": 1024, **request}
    check_fit(problems, "model", instance_type, **request)
    return problems.messages


def test_a_request_within_one_instance_fits():
    assert _problems("ml.g5.12xlarge", accelerators=4, cpu_cores=48, min_memory_mib=196608) == ()


def test_too_many_accelerators():
    [message] = _problems("ml.g5.12xlarge", accelerators=5)
    assert message.startswith("model.accelerators=5: at most 4")


def test_accelerators_on_a_cpu_type():
    [message] = _problems("ml.m5.xlarge", accelerators=1)
    assert message.startswith("model.accelerators=1: ml.m5.xlarge has no accelerators")


def test_too_many_cpu_cores():
    [message] = _problems("ml.m5.xlarge", cpu_cores=4.5)
    assert message.startswith("model.cpu_cores=4.5: at most 4")


def test_too_much_memory():
    [message] = _problems("ml.m5.xlarge", min_memory_mib=16385)
    assert message.startswith("model.min_memory_mib=16385: at most 16384")


def test_an_unknown_type_is_left_to_the_instance_type_rule_which_names_how_to_add_it():
    assert not _problems("ml.t2.medium")
    problems = Problems("test")
    check_hosting_instance_type(problems, "instance_type", "ml.t2.medium")
    [message] = problems.messages
    assert message.startswith("instance_type='ml.t2.medium'")
    assert "scripts/regenerate_instance_specs.py --add ml.t2.medium" in message


def test_bare_field_names_without_prefix():
    problems = Problems("test")
    check_fit(problems, "", "ml.m5.xlarge", accelerators=0, cpu_cores=8, min_memory_mib=None)
    assert problems.messages[0].startswith("cpu_cores=8")


# --- python scripts/regenerate_instance_specs.py ---------------------------------------------

G5_12XLARGE = {
    "InstanceType": "g5.12xlarge",
    "VCpuInfo": {"DefaultVCpus": 48},
    "MemoryInfo": {"SizeInMiB": 196608},
    "InstanceStorageSupported": True,
    "InstanceStorageInfo": {"TotalSizeInGB": 3800},
    "GpuInfo": {
        "Gpus": [
            {
                "Name": "A10G",
                "Manufacturer": "NVIDIA",
                "Count": 4,
                "MemoryInfo": {"SizeInMiB": 22888},
            }
        ],
        "TotalGpuMemoryInMiB": 91552,
    },
    "NetworkInfo": {
        "EfaInfo": {"MaximumEfaInterfaces": 1},
        "NetworkCards": [{"NetworkCardIndex": 0}],
    },
}
INF2_XLARGE = {
    "InstanceType": "inf2.xlarge",
    "VCpuInfo": {"DefaultVCpus": 4},
    "MemoryInfo": {"SizeInMiB": 16384},
    "InstanceStorageSupported": False,
    "NeuronInfo": {
        "NeuronDevices": [
            {
                "Name": "Inferentia2",
                "Count": 1,
                "CoreInfo": {"Count": 2},
                "MemoryInfo": {"SizeInMiB": 32768},
            }
        ],
        "TotalNeuronDeviceMemoryInMiB": 32768,
    },
    "NetworkInfo": {"NetworkCards": [{"NetworkCardIndex": 0}]},
}
NOT_SAGEMAKER = {
    "InstanceType": "x9.nothing",
    "VCpuInfo": {"DefaultVCpus": 1},
    "MemoryInfo": {"SizeInMiB": 1},
}


@pytest.fixture(scope="module")
def script():
    sys.path.insert(0, str(ROOT / "scripts"))
    import regenerate_instance_specs

    return regenerate_instance_specs


def _client():
    return boto3.client(
        "ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )


def test_full_regeneration_pages_through_ec2(script, tmp_path):
    output = tmp_path / "specs.json"
    original = json.loads((ROOT / "fm_platform/hardware/instance_specs.json").read_text())
    output.write_text(json.dumps(original))
    client = _client()
    with Stubber(client) as stubber:
        stubber.add_response(
            "describe_instance_types",
            {"InstanceTypes": [G5_12XLARGE, NOT_SAGEMAKER], "NextToken": "page-2"},
            {},
        )
        stubber.add_response(
            "describe_instance_types", {"InstanceTypes": [INF2_XLARGE]}, {"NextToken": "page-2"}
        )
        assert script.main(["--output", str(output)], client=client) == 0
        stubber.assert_no_pending_responses()
    data = json.loads(output.read_text())
    g5 = data["instance_types"]["ml.g5.12xlarge"]
    expected = dict(original["instance_types"]["ml.g5.12xlarge"], sources=[script.SOURCE_ID])
    assert g5 == expected
    inf2 = data["instance_types"]["ml.inf2.xlarge"]
    assert (inf2["accelerator"], inf2["neuron_cores"], inf2["sagemaker_apis"]) == (
        "inferentia",
        2,
        ["hosting"],
    )
    assert "ml.x9.nothing" not in data["instance_types"]
    assert len(data["instance_types"]) == len(original["instance_types"])
    assert data["source"][-1]["id"] == script.SOURCE_ID
    assert data["source"][-1]["region"] == "us-east-1"
    assert set(data) == set(original)


def test_add_asks_ec2_for_one_type(script, tmp_path):
    output = tmp_path / "specs.json"
    client = _client()
    with Stubber(client) as stubber:
        stubber.add_response(
            "describe_instance_types",
            {"InstanceTypes": [G5_12XLARGE]},
            {"InstanceTypes": ["g5.12xlarge"]},
        )
        assert script.main(["--add", "ml.g5.12xlarge", "--output", str(output)], client) == 0
    data = json.loads(output.read_text())
    assert list(data["instance_types"]) == ["ml.g5.12xlarge"]
    assert data["instance_types"]["ml.g5.12xlarge"]["efa_interfaces"] == 1


def test_add_rejects_a_type_without_the_ml_prefix(script, tmp_path):
    with pytest.raises(SystemExit):
        script.main(["--add", "g5.12xlarge", "--output", str(tmp_path / "x.json")], _client())
