"""The KMS rule for endpoint configs: a key only for instance types whose storage is an EBS
volume; local NVMe storage is hardware-encrypted and the key does not apply to it."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Annotations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IConstruct

from fm_platform.core.compliance import acknowledge
from fm_platform.core.encryption import customer_managed_key
from fm_platform.hardware.instances import instance_spec


def storage_key_applies(instance_type: str) -> bool:
    """True when an endpoint-config KMS key applies to ``instance_type``'s storage.

    False for types with local NVMe instance storage (hardware-encrypted; the key does not
    apply there), True for EBS-backed types. Raises ``UnknownInstanceTypeError`` for types
    the instance data file does not describe.
    """
    return not instance_spec(instance_type).local_nvme


def volume_encryption_key(
    scope: Construct, instance_type: str, key: kms.IKey | None
) -> kms.IKey | None:
    """The KMS key to set on an endpoint config hosting ``instance_type``.

    EBS-backed types: ``key``, or a new customer-managed key (construct ID ``VolumeKey``
    under ``scope``). Types with local NVMe storage: None; when ``key`` was passed it is not
    set and a warning annotation on ``scope`` says why.
    """
    if storage_key_applies(instance_type):
        return key or customer_managed_key(
            scope, "VolumeKey", purpose="SageMaker endpoint storage volumes"
        )
    if key is not None:
        Annotations.of(scope).add_warning_v2(
            "fm_platform:nvmeKmsKeyIgnored",
            f"encryption_key is not set on the endpoint config: {instance_type} stores data "
            "on local NVMe instance storage, which is hardware-encrypted and which "
            "SageMaker's KMS key does not apply to (older API versions rejected a key for "
            "such types).",
        )
    return None


def encrypt_endpoint_config(
    scope: Construct,
    endpoint_config: sagemaker.CfnEndpointConfig,
    instance_types: Sequence[str],
    key: kms.IKey | None,
) -> kms.IKey | None:
    """Apply the KMS rule to ``endpoint_config`` hosting ``instance_types``; returns the key
    set on it.

    When every type's storage is EBS: ``key``, or a new customer-managed key (construct ID
    ``VolumeKey`` under ``scope``), set as the config's ``KmsKeyId``. When any type has local
    NVMe storage: no key (see :func:`volume_encryption_key`) and the HIPAA/NIST findings on
    the config are acknowledged.
    """
    nvme = [t for t in instance_types if not storage_key_applies(t)]
    instance_type = nvme[0] if nvme else instance_types[0]
    chosen = volume_encryption_key(scope, instance_type, key)
    if chosen is None:
        acknowledge_config_without_key(endpoint_config, instance_type)
    else:
        endpoint_config.kms_key_id = chosen.key_arn
    return chosen


def acknowledge_config_without_key(endpoint_config: IConstruct, instance_type: str) -> None:
    """Acknowledge the HIPAA/NIST "endpoint config without KMS key" findings on
    ``endpoint_config`` hosting ``instance_type`` (a type with local NVMe storage)."""
    acknowledge(
        endpoint_config,
        f"{instance_type} keeps endpoint data on local NVMe instance storage, which is "
        "hardware-encrypted at rest; SageMaker's endpoint-config KMS key does not apply to "
        "it, so no key is set.",
        "HIPAA.Security-SageMakerEndpointConfigurationKMSKeyConfigured",
        "NIST.800.53.R5-SageMakerEndpointConfigurationKMSKeyConfigured",
    )
