"""Rules of the training network: AZ IDs, the VPC range, subnet sizes and how many
addresses a cluster needs."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

from fm_platform.rules.problems import Problems

# AWS reserves the first four addresses and the last one of every subnet.
AWS_RESERVED_ADDRESSES_PER_SUBNET = 5
# An AZ ID is a short Region code (e.g. "use1" for us-east-1, "apne1" for ap-northeast-1),
# "-az" and a number: "use1-az4". Source: AWS Regions and Availability Zones guide, "AZ IDs".
_AZ_ID = re.compile(r"^[a-z]{2,5}[0-9]+-az[0-9]+$")
# The VPC and subnet masks VPC accepts (Amazon VPC User Guide, "VPC CIDR blocks").
MIN_MASK = 16
MAX_MASK = 28
#: Subnet addresses kept free beyond the instances' own: FSx for Lustre's network
#: interfaces and a few for replacement nodes coming up while a faulty one drains.
SUBNET_ADDRESS_MARGIN = 16


def usable_addresses_of_mask(prefix_length: int) -> int:
    """How many addresses of a ``/prefix_length`` subnet instances can use (AWS keeps
    five)."""
    return max((1 << (32 - prefix_length)) - AWS_RESERVED_ADDRESSES_PER_SUBNET, 0)


def usable_ipv4_addresses(cidr: str) -> int:
    """How many addresses of the subnet ``cidr`` instances can use (AWS keeps five)."""
    return usable_addresses_of_mask(ipaddress.IPv4Network(cidr, strict=False).prefixlen)


def check_availability_zone_id(problems: Problems, field: str, zone: str | None) -> None:
    """An AZ ID such as ``use1-az4``, not an AZ name."""
    if zone is not None and not _AZ_ID.match(zone):
        problems.add(
            field,
            zone,
            "must be an AZ ID such as use1-az4 (not an AZ name such as us-east-1a); "
            "find yours with `aws ec2 describe-availability-zones`",
        )


def check_vpc_cidr(problems: Problems, field: str, cidr: str | None) -> int | None:
    """An IPv4 CIDR block with a /16-/28 mask; returns its mask, or None when bad or
    unknown."""
    if cidr is None:
        return None
    try:
        network = ipaddress.IPv4Network(cidr, strict=True)
    except (ipaddress.AddressValueError, ipaddress.NetmaskValueError, ValueError) as error:
        problems.add(field, cidr, f"must be an IPv4 CIDR block such as 10.0.0.0/16 ({error})")
        return None
    if not MIN_MASK <= network.prefixlen <= MAX_MASK:
        problems.add(field, cidr, f"mask must be between /{MIN_MASK} and /{MAX_MASK}")
        return None
    return network.prefixlen


def check_subnet_mask(
    problems: Problems, field: str, mask: int | None, vpc_mask: int | None
) -> None:
    """A subnet mask within /16-/28 and larger than the VPC's (so that each subnet is at
    most half the VPC and both subnets fit)."""
    problems.check_range(field, mask, MIN_MASK, MAX_MASK)
    if mask is not None and vpc_mask is not None and mask <= vpc_mask:
        problems.add(
            field,
            mask,
            f"must be larger than the VPC's mask /{vpc_mask}: then each subnet is at most half "
            "the VPC and both fit in it",
        )


def vpc_mask_of(cidr: object) -> int | None:
    """The mask of the VPC block ``cidr`` when it is an IPv4 CIDR block with a /16-/28 mask
    (host bits aside: :func:`check_vpc_cidr` reports those), else None."""
    if not isinstance(cidr, str):
        return None
    try:
        mask = ipaddress.IPv4Network(cidr, strict=False).prefixlen
    except ValueError:  # AddressValueError and NetmaskValueError are ValueErrors
        return None
    return mask if subnet_mask_in_range(mask) else None


def subnet_mask_in_range(mask: object) -> bool:
    """Whether ``mask`` is a subnet mask :func:`check_subnet_mask` accepts the size of
    (an integer within /16-/28), so that the subnet's addresses are known."""
    return isinstance(mask, int) and not isinstance(mask, bool) and MIN_MASK <= mask <= MAX_MASK


def smallest_mask_holding(addresses: int) -> int | None:
    """The largest mask (smallest subnet) within /16-/28 whose usable addresses hold
    ``addresses``; None when even a /16 is too small."""
    for mask in range(MAX_MASK, MIN_MASK - 1, -1):
        if usable_addresses_of_mask(mask) >= addresses:
            return mask
    return None


def _larger_subnet_hint(required: int, vpc_mask: int | None) -> str:
    """What subnet (and VPC) would hold ``required`` addresses."""
    mask = smallest_mask_holding(required)
    if mask is None:
        return (
            f"even a /{MIN_MASK} subnet ({usable_addresses_of_mask(MIN_MASK)} usable) is too "
            "small: use fewer instances, or fewer EFA instances, per cluster"
        )
    if vpc_mask is not None and mask <= vpc_mask:
        if mask - 1 < MIN_MASK:
            return (
                f"a /{mask} subnet would hold them, but a subnet must be smaller than its VPC "
                f"and a VPC is at most /{MIN_MASK}: use fewer instances per cluster"
            )
        return (
            f"use a /{mask} subnet (mask {mask}) in a larger VPC: vpc_cidr with a mask of "
            f"/{mask - 1} or less, since a subnet must be smaller than its VPC"
        )
    return f"use a /{mask} subnet or a larger one (a mask of {mask} or less)"


def check_subnet_capacity(
    problems: Problems,
    field: str,
    value: object,
    prefix_length: int | None,
    required_addresses: int | None,
    *,
    vpc_mask: int | None = None,
    left_out: Sequence[str] = (),
) -> None:
    """A ``/prefix_length`` subnet holds ``required_addresses`` (``value`` is what the user
    wrote: a mask or a CIDR). ``left_out``: the groups the count leaves out, whose type or
    count is wrong (already reported), so that it is a lower bound and says so.
    ``vpc_mask``: the VPC's mask when known, so that the suggested subnet fits in it."""
    if prefix_length is None or required_addresses is None:
        return
    usable = usable_addresses_of_mask(prefix_length)
    if required_addresses > usable:
        need = f"at least {required_addresses}" if left_out else str(required_addresses)
        counted = (
            "; counting only the groups whose instance type and count are known, not "
            + ", ".join(left_out)
            if left_out
            else ""
        )
        problems.add(
            field,
            value,
            f"{usable} usable addresses, but the instance groups need {need} "
            f"(one per instance and per EFA interface, plus {SUBNET_ADDRESS_MARGIN} spare"
            f"{counted}); " + _larger_subnet_hint(required_addresses, vpc_mask),
        )
