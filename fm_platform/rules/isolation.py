"""Network isolation of a model on an Inference Components endpoint.

Source: botocore's SageMaker model, ``CreateEndpointConfigInput.EnableNetworkIsolation``:
"Sets whether all model containers deployed to the endpoint are isolated. If they are, no
inbound or outbound network calls can be made to or from the model containers." An
isolated endpoint isolates every model on it, whatever the model's own
``EnableNetworkIsolation`` says: a container that downloads its weights (from a model hub)
fails to start there, and the stack rolls back.
"""

from __future__ import annotations

from fm_platform.rules.problems import Problems


def check_model_isolation(
    problems: Problems, field: str, model_isolation: bool | None, endpoint_isolation: bool | None
) -> None:
    """A model asking for the network (``model_isolation`` False) on an endpoint that runs
    network-isolated is refused (None: not given, or not known)."""
    if model_isolation is False and endpoint_isolation:
        problems.add(
            field,
            model_isolation,
            "the endpoint runs network-isolated, which applies to every container on it "
            "(botocore CreateEndpointConfigInput.EnableNetworkIsolation): place the model "
            "on an endpoint with network_isolation=False, or give it its weights in S3 "
            "and leave network_isolation unset",
        )
