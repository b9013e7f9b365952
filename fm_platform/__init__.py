"""fm_platform: AWS CDK constructs and stacks for training (SageMaker HyperPod with Slurm)
and serving (SageMaker real-time endpoints) foundation models.

Every construct takes one frozen props object, validates it at construction (one
``ValueError`` listing every problem) and exposes the resources it creates as attributes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: The package version (semantic versioning; see CHANGELOG.md). pyproject.toml reads it.
__version__ = "0.2.0"

# The public names and the modules that define them. They are imported on first use, so
# that the ``fmp`` command (fm_platform.cli) starts without loading aws-cdk-lib.
_EXPORTS = {
    "acknowledge": "fm_platform.compliance",
    "AppConfig": "fm_platform.config",
    "apply_compliance_packs": "fm_platform.compliance",
    "build_app": "fm_platform.app",
    "ClusterNetwork": "fm_platform.constructs.training.network",
    "ClusterNetworkProps": "fm_platform.constructs.training.network",
    "ComponentScaling": "fm_platform.constructs.inference.component_scaling",
    "ContainerSpec": "fm_platform.stacks.inference",
    "DataCaptureProps": "fm_platform.constructs.inference.single_model_endpoint",
    "DataRepositoryAssociationProps": "fm_platform.constructs.training.filesystem",
    "deep_learning_container_image": "fm_platform.images",
    "EndpointReference": "fm_platform.constructs.inference.ic_endpoint",
    "HostingRole": "fm_platform.constructs.inference.execution_role",
    "HostingRoleProps": "fm_platform.constructs.inference.execution_role",
    "HyperPodCluster": "fm_platform.constructs.training.hyperpod",
    "HyperPodClusterProps": "fm_platform.constructs.training.hyperpod",
    "IcEndpointSpec": "fm_platform.stacks.inference",
    "IcModelSpec": "fm_platform.stacks.inference",
    "InferenceComponentModel": "fm_platform.constructs.inference.inference_component",
    "InferenceComponentModelProps": "fm_platform.constructs.inference.inference_component",
    "InferenceConfig": "fm_platform.stacks.inference",
    "InferenceEndpoint": "fm_platform.constructs.inference.ic_endpoint",
    "InferenceEndpointProps": "fm_platform.constructs.inference.ic_endpoint",
    "InferenceStack": "fm_platform.stacks.inference",
    "instance_spec": "fm_platform.specs.instances",
    "InstanceGroup": "fm_platform.constructs.training.instance_groups",
    "InstanceScaling": "fm_platform.constructs.inference.instance_scaling",
    "InstanceSpec": "fm_platform.specs.instances",
    "LifecycleScripts": "fm_platform.constructs.training.lifecycle",
    "LifecycleScriptsProps": "fm_platform.constructs.training.lifecycle",
    "LifecycleStorage": "fm_platform.constructs.training.lifecycle",
    "load_config": "fm_platform.config",
    "ModelContainer": "fm_platform.constructs.inference.model_container",
    "MultiModelEndpoint": "fm_platform.constructs.inference.multi_model_endpoint",
    "MultiModelEndpointProps": "fm_platform.constructs.inference.multi_model_endpoint",
    "MultiModelEndpointSpec": "fm_platform.stacks.inference",
    "NodeRole": "fm_platform.constructs.training.instance_groups",
    "Problems": "fm_platform.validation",
    "provisioning_parameters": "fm_platform.constructs.training.instance_groups",
    "register_instance_type": "fm_platform.specs.instances",
    "register_instance_types_from_file": "fm_platform.specs.instances",
    "RollingUpdate": "fm_platform.constructs.inference.inference_component",
    "SecureBucket": "fm_platform.constructs.secure_bucket",
    "SecureBucketProps": "fm_platform.constructs.secure_bucket",
    "SharedFileSystem": "fm_platform.constructs.training.filesystem",
    "SharedFileSystemProps": "fm_platform.constructs.training.filesystem",
    "SingleModelEndpoint": "fm_platform.constructs.inference.single_model_endpoint",
    "SingleModelEndpointProps": "fm_platform.constructs.inference.single_model_endpoint",
    "SingleModelEndpointSpec": "fm_platform.stacks.inference",
    "TrainingConfig": "fm_platform.stacks.training",
    "TrainingDataStack": "fm_platform.stacks.training_data",
    "TrainingStack": "fm_platform.stacks.training",
    "ValidationError": "fm_platform.validation",
    "VariantSpec": "fm_platform.constructs.inference.single_model_endpoint",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from fm_platform.app import build_app
    from fm_platform.compliance import acknowledge, apply_compliance_packs
    from fm_platform.config import AppConfig, load_config
    from fm_platform.constructs.inference.component_scaling import ComponentScaling
    from fm_platform.constructs.inference.execution_role import HostingRole, HostingRoleProps
    from fm_platform.constructs.inference.ic_endpoint import (
        EndpointReference,
        InferenceEndpoint,
        InferenceEndpointProps,
    )
    from fm_platform.constructs.inference.inference_component import (
        InferenceComponentModel,
        InferenceComponentModelProps,
        RollingUpdate,
    )
    from fm_platform.constructs.inference.instance_scaling import InstanceScaling
    from fm_platform.constructs.inference.model_container import ModelContainer
    from fm_platform.constructs.inference.multi_model_endpoint import (
        MultiModelEndpoint,
        MultiModelEndpointProps,
    )
    from fm_platform.constructs.inference.single_model_endpoint import (
        DataCaptureProps,
        SingleModelEndpoint,
        SingleModelEndpointProps,
        VariantSpec,
    )
    from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
    from fm_platform.constructs.training.filesystem import (
        DataRepositoryAssociationProps,
        SharedFileSystem,
        SharedFileSystemProps,
    )
    from fm_platform.constructs.training.hyperpod import HyperPodCluster, HyperPodClusterProps
    from fm_platform.constructs.training.instance_groups import (
        InstanceGroup,
        NodeRole,
        provisioning_parameters,
    )
    from fm_platform.constructs.training.lifecycle import (
        LifecycleScripts,
        LifecycleScriptsProps,
        LifecycleStorage,
    )
    from fm_platform.constructs.training.network import ClusterNetwork, ClusterNetworkProps
    from fm_platform.images import deep_learning_container_image
    from fm_platform.specs.instances import (
        InstanceSpec,
        instance_spec,
        register_instance_type,
        register_instance_types_from_file,
    )
    from fm_platform.stacks.inference import (
        ContainerSpec,
        IcEndpointSpec,
        IcModelSpec,
        InferenceConfig,
        InferenceStack,
        MultiModelEndpointSpec,
        SingleModelEndpointSpec,
    )
    from fm_platform.stacks.training import TrainingConfig, TrainingStack
    from fm_platform.stacks.training_data import TrainingDataStack
    from fm_platform.validation import Problems, ValidationError
