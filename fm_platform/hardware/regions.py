"""Which region an AZ ID belongs to.

An AZ ID starts with a short code of its region: ``use1-az4`` is in us-east-1,
``apne1-az1`` in ap-northeast-1, ``usgw1-az1`` in us-gov-west-1 (the area, the first letter
of any further word, the direction's initials, the number). The regions come from
botocore's endpoint data, so a region botocore knows is matched without a table here.
"""

from __future__ import annotations

from functools import cache

import botocore.session

_DIRECTIONS = {
    "north": "n",
    "south": "s",
    "east": "e",
    "west": "w",
    "central": "c",
    "northeast": "ne",
    "northwest": "nw",
    "southeast": "se",
    "southwest": "sw",
}


def az_id_prefix(region: str) -> str | None:
    """The AZ ID code of ``region`` (``use1`` for us-east-1), or None for a region name of
    another shape."""
    parts = region.split("-")
    if len(parts) < 3 or not parts[-1].isdigit() or parts[-2] not in _DIRECTIONS:
        return None
    others = "".join(word[0] for word in parts[1:-2])
    return f"{parts[0]}{others}{_DIRECTIONS[parts[-2]]}{parts[-1]}"


@cache
def _known_regions() -> tuple[str, ...]:
    session = botocore.session.get_session()
    regions: set[str] = set()
    for partition in session.get_available_partitions():
        regions.update(session.get_available_regions("ec2", partition_name=partition))
    return tuple(sorted(regions))


def region_of_az_id(availability_zone_id: str) -> str | None:
    """The region an AZ ID belongs to, or None when no region botocore knows matches."""
    prefix = availability_zone_id.split("-az")[0]
    matches = [region for region in _known_regions() if az_id_prefix(region) == prefix]
    return matches[0] if len(matches) == 1 else None
