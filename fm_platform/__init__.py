"""fm_platform: AWS CDK constructs and stacks for training (SageMaker HyperPod with Slurm)
and serving (SageMaker real-time endpoints) foundation models.

Every construct takes one frozen props object, validates it at construction (one
``ValueError`` listing every problem) and exposes the resources it creates as attributes.
"""

from fm_platform.compliance import acknowledge, apply_compliance_packs
from fm_platform.constructs.component_scaling import ComponentScaling
from fm_platform.constructs.filesystem import (
    DataRepositoryAssociationProps,
    SharedFileSystem,
    SharedFileSystemProps,
)
from fm_platform.constructs.hosting import HostingRole, HostingRoleProps, ModelContainer
from fm_platform.constructs.hyperpod import HyperPodCluster, HyperPodClusterProps
from fm_platform.constructs.ic_endpoint import (
    EndpointReference,
    InferenceEndpoint,
    InferenceEndpointProps,
)
from fm_platform.constructs.inference_component import (
    InferenceComponentModel,
    InferenceComponentModelProps,
    RollingUpdate,
)
from fm_platform.constructs.instance_groups import (
    InstanceGroup,
    NodeRole,
    provisioning_parameters,
)
from fm_platform.constructs.instance_scaling import InstanceScaling
from fm_platform.constructs.lifecycle import LifecycleScripts, LifecycleScriptsProps
from fm_platform.constructs.multi_model_endpoint import (
    MultiModelEndpoint,
    MultiModelEndpointProps,
)
from fm_platform.constructs.network import ClusterNetwork, ClusterNetworkProps
from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
from fm_platform.constructs.single_model_endpoint import (
    DataCaptureProps,
    SingleModelEndpoint,
    SingleModelEndpointProps,
    VariantSpec,
)
from fm_platform.stacks.inference import InferenceConfig, InferenceStack
from fm_platform.stacks.training import TrainingConfig, TrainingStack

__all__ = [
    "ClusterNetwork",
    "ClusterNetworkProps",
    "ComponentScaling",
    "DataCaptureProps",
    "DataRepositoryAssociationProps",
    "EndpointReference",
    "HostingRole",
    "HostingRoleProps",
    "HyperPodCluster",
    "HyperPodClusterProps",
    "InferenceComponentModel",
    "InferenceComponentModelProps",
    "InferenceConfig",
    "InferenceEndpoint",
    "InferenceEndpointProps",
    "InferenceStack",
    "InstanceGroup",
    "InstanceScaling",
    "LifecycleScripts",
    "LifecycleScriptsProps",
    "ModelContainer",
    "MultiModelEndpoint",
    "MultiModelEndpointProps",
    "NodeRole",
    "RollingUpdate",
    "SecureBucket",
    "SecureBucketProps",
    "SharedFileSystem",
    "SharedFileSystemProps",
    "SingleModelEndpoint",
    "SingleModelEndpointProps",
    "TrainingConfig",
    "TrainingStack",
    "VariantSpec",
    "acknowledge",
    "apply_compliance_packs",
    "provisioning_parameters",
]
