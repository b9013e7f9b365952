"""The image a model's container runs, and the pull it adds to the role that runs it
(:func:`add_image_pull`).

A container family's image (:meth:`ContainerImage.from_family`, the default of every
model) comes from the one image table the planner reads too
(:mod:`fm_platform.containers.images`, ``images.json``): its repository and tag per
hardware kind, and the account that publishes it in each region.
"""

from __future__ import annotations

import re
from functools import lru_cache

from aws_cdk import Aws, CfnMapping, Stack
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_iam as iam
from constructs import Construct, IConstruct

from fm_platform.constructs.inference.role_grants import role_grants_of
from fm_platform.containers.images import Image, hardware_of, image
from fm_platform.core.tokens import is_unresolved

# <account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository>[:tag|@digest]; the region may
# be a token (e.g. Stack.region), whose text holds dots.
_ECR_IMAGE = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr(?:-fips)?\.(?P<region>.+?)\.amazonaws\.com"
    r"(?P<cn>\.cn)?/(?P<repository>[^:@]+)(?:[:@].*)?$"
)
_REGION = re.compile(r"^[a-z0-9-]+$")
#: The family a model runs when its container names no image: Large Model Inference.
DEFAULT_FAMILY = "lmi"


class ContainerImage:
    """A container image for a SageMaker model.

    Make one with :meth:`from_uri` (any registry; an ECR URI names its repository),
    :meth:`from_ecr_repository` or :meth:`from_family` (a container family's image in the
    hosting stack's region, from the image table). :meth:`bind` grants the role that runs the
    model pull on the image's ECR repository and returns the URI; an image whose repository
    is known only at deploy time gets pull on this account's and region's repositories.
    """

    def __init__(self, description: str) -> None:
        self._description = description

    def __repr__(self) -> str:
        return f"ContainerImage({self._description})"

    @staticmethod
    def from_uri(uri: str) -> ContainerImage:
        """The image at ``uri`` (parsed once per URI)."""
        return _uri_image(uri)

    @staticmethod
    def from_ecr_repository(repository: ecr.IRepository, tag: str = "latest") -> ContainerImage:
        """The image ``tag`` (or ``sha256:...`` digest) of ``repository``."""
        return _RepositoryImage(repository, tag)

    @staticmethod
    def from_family(family: str = DEFAULT_FAMILY, hardware: str = "gpu") -> ContainerImage:
        """The image of container ``family`` for ``hardware`` (``gpu``, ``neuron`` or
        ``cpu``) in the region of the stack that hosts the model, from the image table
        (``fm_platform/containers/images.json``); by default Large Model Inference (vLLM)
        for GPUs. Refused when the table has no such image; a stack whose region has none
        is refused at synth."""
        return _family_image(family, hardware)

    @staticmethod
    def of(image: str | ContainerImage) -> ContainerImage:
        """``image``, made a :class:`ContainerImage` when given as a URI."""
        return image if isinstance(image, ContainerImage) else ContainerImage.from_uri(image)

    def image_uri(self, scope: Construct) -> str:
        """The image's URI as a model in ``scope``'s stack names it."""
        raise NotImplementedError

    def repository_arn(self, scope: IConstruct, partition: str) -> str | None:
        """The ARN of the image's ECR repository (in ``scope``'s stack's region for a Deep
        Learning Container), or None when it is not an ECR image with a known account and
        repository."""
        raise NotImplementedError

    def bind(self, scope: Construct, role: iam.IRole) -> str:
        """Grant ``role`` pull on this image (see the class docstring) and return its URI
        for a model in ``scope``'s stack."""
        uri = self.image_uri(scope)
        add_image_pull(role, uri, self)
        return uri


def add_image_pull(role: iam.IRole, uri: str, image: ContainerImage | None = None) -> None:
    """Add ECR layer download for the image at ``uri`` (described by ``image``, by default
    read from the URI) to ``role`` (any role, imported ones too); a repository already
    granted to ``role`` is not granted again.

    Scoped to the image's repository when it is known (an ECR URI naming its account and
    repository literally, whose region may be a token; an ECR repository; a Deep Learning
    Container); otherwise to every repository of this account and region, with the
    wildcard acknowledged. A repository that continues the role's pull statement, and the
    acknowledgement, reach the role when the app is synthesized.
    """
    role_grants_of(role).pull(uri, image or ContainerImage.from_uri(uri))


class _UriImage(ContainerImage):
    def __init__(self, uri: str) -> None:
        super().__init__(repr(uri))
        self.uri = uri
        match = _ECR_IMAGE.match(uri)
        self._parts = None
        if match is not None and not is_unresolved(match["repository"]):
            region = match["region"]
            if is_unresolved(region) or _REGION.match(region):
                self._parts = (match["account"], region, match["repository"], bool(match["cn"]))

    def image_uri(self, scope: Construct) -> str:
        return self.uri

    def repository_arn(self, scope: IConstruct, partition: str) -> str | None:
        if self._parts is None:
            return None
        account, region, repository, china = self._parts
        partition = "aws-cn" if china else partition
        return f"arn:{partition}:ecr:{region}:{account}:repository/{repository}"


@lru_cache(maxsize=4096)
def _uri_image(uri: str) -> _UriImage:
    return _UriImage(uri)


class _RepositoryImage(ContainerImage):
    def __init__(self, repository: ecr.IRepository, tag: str) -> None:
        super().__init__(f"repository {repository.node.path}, {tag}")
        self.repository = repository
        self.tag = tag

    def image_uri(self, scope: Construct) -> str:
        if self.tag.startswith("sha256:"):
            return self.repository.repository_uri_for_digest(self.tag)
        return self.repository.repository_uri_for_tag(self.tag)

    def repository_arn(self, scope: IConstruct, partition: str) -> str | None:
        return self.repository.repository_arn


class _FamilyImage(ContainerImage):
    """A family's image: in a stack with a literal region, the table's URI there; in an
    environment-agnostic stack, the publishing account looked up by region at deploy time
    (a ``Mappings`` entry per family and hardware kind, ``<Family><Hardware>ImageAccounts``)."""

    def __init__(self, found: Image) -> None:
        super().__init__(f"{found.family} {found.hardware} image {found.repository}:{found.tag}")
        self.found = found

    def _account_and_region(self, scope: IConstruct) -> tuple[str, str, str]:
        """The publishing account, the region and the URL suffix of ``scope``'s stack."""
        stack = Stack.of(scope)
        region = stack.region
        if is_unresolved(region):
            return self._accounts(stack).find_in_map(Aws.REGION, "account"), region, Aws.URL_SUFFIX
        account = self.found.accounts.get(region)
        if account is None:
            raise ValueError(
                f"{scope.node.path}: container {self.found.family} has no "
                f"{self.found.hardware} image in {region} (the image table publishes it in "
                f"{len(self.found.accounts)} other regions); set the container's image"
            )
        suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
        return account, region, suffix

    def _accounts(self, stack: Stack) -> CfnMapping:
        construct_id = f"{self.found.family.title()}{self.found.hardware.title()}ImageAccounts"
        existing = stack.node.try_find_child(construct_id)
        if isinstance(existing, CfnMapping):
            return existing
        accounts = {region: {"account": acct} for region, acct in self.found.accounts.items()}
        return CfnMapping(stack, construct_id, mapping=accounts)

    def image_uri(self, scope: Construct) -> str:
        account, region, suffix = self._account_and_region(scope)
        return f"{account}.dkr.ecr.{region}.{suffix}/{self.found.repository}:{self.found.tag}"

    def repository_arn(self, scope: IConstruct, partition: str) -> str | None:
        account, region, _ = self._account_and_region(scope)
        return f"arn:{partition}:ecr:{region}:{account}:repository/{self.found.repository}"


@lru_cache(maxsize=64)
def _family_image(family: str, hardware: str) -> _FamilyImage:
    found = image(family, hardware)
    if found is None:
        kinds = ", ".join(hardware_of(family)) or "none: not a family of the table"
        raise ValueError(
            f"container family {family!r} has no {hardware!r} image (it has {kinds}); "
            "name another family or hardware kind, or give an image URI"
        )
    return _FamilyImage(found)
