"""Plans that stay true: re-plans recompute, move what no longer fits and say what changed;
repacking proposes only moves that save at least the threshold."""

from __future__ import annotations

import json
import math
import re

from fm_platform.fleet.deciding.kinds import KINDS
from fm_platform.fleet.outputs.changes import plan_changes
from fm_platform.fleet.outputs.plan import Plan, plan_from_json
from fm_platform.fleet.placing.cost import plan_cost
from fm_platform.fleet.placing.planner import Limits, Planner, plan_fleet
from fm_platform.fleet.placing.repack import repack
from tests.fleet_support import catalog, catalog_data, example, realistic_catalog_data

CHAT = {"name": "chat", "architecture": "llama-3.1-8b", "peak_rpm": 120}
OTHER = {"name": "other", "architecture": "mistral-7b-v0.3", "peak_rpm": 60}


def test_a_raised_peak_recomputes_copies_like_a_fresh_plan():
    before = plan_from_json(plan_fleet(catalog([CHAT, OTHER])).to_json())
    busier = catalog([{**CHAT, "peak_rpm": 3000}, OTHER])
    replanned = Planner(busier, before)
    after = replanned.run()
    p = after.placements["chat"]
    assert p.endpoint == before.placements["chat"].endpoint
    assert p.max_copies == math.ceil(3000 / p.rpm_per_copy)
    assert p.max_copies > 2 * before.placements["chat"].max_copies
    endpoint = after.endpoints[after.placements["chat"].endpoint]
    assert endpoint.max_instances > before.endpoints[endpoint.name].max_instances
    changes = plan_changes(before, after, replanned.moves)
    assert any(line.startswith("resized chat: 1-") for line in changes)
    assert changes[-1].startswith("expected cost: $")


def test_scale_to_zero_is_recomputed_from_the_catalog():
    before = plan_from_json(plan_fleet(catalog([CHAT, OTHER])).to_json())
    assert before.placements["chat"].min_copies == 1
    idle = plan_fleet(catalog([{**CHAT, "active_hours": 2}, OTHER]), before)
    assert idle.placements["chat"].min_copies == 0


def test_a_model_that_no_longer_fits_its_endpoint_moves_and_says_why():
    small = {"name": "m", "architecture": "llama-3.1-8b", "peak_rpm": 60, "instance_family": "g6e"}
    before = plan_from_json(plan_fleet(catalog([small])).to_json())
    assert before.endpoints[before.placements["m"].endpoint].instance_type == "ml.g6e.xlarge"
    bigger = catalog([{**small, "architecture": "llama-3.1-70b"}])
    planner = Planner(bigger, before)
    after = planner.run()
    assert after.endpoints[after.placements["m"].endpoint].instance_type != "ml.g6e.xlarge"
    assert planner.moves["m"].startswith("ml.g6e.xlarge can no longer run it: one copy needs")
    lines = plan_changes(before, after, planner.moves)
    assert any(line.startswith("moved m: ") and "can no longer run it" in line for line in lines)


def test_an_unchanged_replan_reports_nothing():
    cat = catalog([CHAT, OTHER])
    before = plan_from_json(plan_fleet(cat).to_json())
    planner = Planner(cat, before)
    assert plan_changes(before, planner.run(), planner.moves) == []


def test_repacking_a_fresh_plan_proposes_nothing():
    cat = example(60)
    plan = plan_fleet(cat)
    repacked, moves = repack(cat, plan, min_saving=0)
    assert moves == [] and repacked.to_json() == plan.to_json()


def test_repacking_after_churn_proposes_only_steps_that_save_the_threshold():
    data = catalog_data(80)
    half = catalog({**data, "models": data["models"][::2]}["models"])
    full = catalog(data["models"])
    churned = plan_fleet(full, plan_from_json(plan_fleet(half).to_json()))
    repacked, moves = repack(full, churned, min_saving=50)
    for move in moves:
        assert move.step_saving >= 50 and move.before != move.after
    saving = plan_cost(churned).expected_monthly - plan_cost(repacked).expected_monthly
    assert saving >= 50 * bool(moves)
    # every moved model records the endpoint it left, which names its component anew
    left = {move.model: move.before for move in moves}
    assert {n: p.moved_from for n, p in repacked.placements.items() if p.moved_from} == left
    # a threshold above any saving proposes nothing
    assert repack(full, churned, min_saving=10**9)[1] == []


def test_a_model_on_a_type_the_new_region_does_not_price_moves_and_says_so():
    g6e = {"name": "m", "architecture": "llama-3.1-8b", "peak_rpm": 60, "instance_family": "g6e"}
    before = plan_from_json(plan_fleet(catalog([g6e])).to_json())
    planner = Planner(catalog([{**g6e, "instance_family": None}]), before, region="eu-west-1")
    after = planner.run()
    assert planner.moves["m"] == "ml.g6e.xlarge has no price in eu-west-1"
    assert after.region == "eu-west-1"


def test_a_replan_fills_an_endpoint_with_room_before_opening_a_new_one():
    big = {"name": "big", "architecture": "llama-3.1-70b", "peak_rpm": 30, "instance_family": "p4d"}
    before = plan_from_json(plan_fleet(catalog([big])).to_json())
    (home,) = before.endpoints.values()
    small = {
        "name": "small",
        "architecture": "llama-3.1-8b",
        "peak_rpm": 30,
        "active_hours": 12,
        "cold_start_tolerant": True,
    }
    alone = plan_fleet(catalog([small]))
    # On its own the small model would open an endpoint of another type ...
    assert {e.instance_type for e in alone.endpoints.values()} != {home.instance_type}
    after = Planner(catalog([big, small]), before).run()
    # ... on a re-plan it takes the devices the big model's instance leaves free.
    assert set(after.endpoints) == set(before.endpoints)
    p = after.placements["small"]
    assert p.endpoint == home.name
    assert f"joins {home.name} ({home.instance_type}), whose instances have devices free" in (
        p.reason
    )
    assert plan_cost(after).expected_hourly <= plan_cost(before).expected_hourly + (
        plan_cost(alone).expected_hourly
    )


def test_a_moved_model_records_where_it_was_and_keeps_it_while_it_stays():
    # chat joins a group: it moves to a new endpoint of the same instance type (the same
    # replacement key), so its component is named after the new endpoint.
    before = plan_from_json(plan_fleet(catalog([CHAT, OTHER])).to_json())
    old = before.placements["chat"]
    assert (old.moved_from, old.component_suffix) == ("", None)
    grouped = catalog([{**CHAT, "group": "chat"}, OTHER])
    planner = Planner(grouped, before)
    after = planner.run()
    moved = after.placements["chat"]
    assert (moved.endpoint, moved.moved_from) == ("ic-chat-001", old.endpoint)
    assert moved.component_suffix == "ic-chat-001"
    assert after.placements["other"].moved_from == ""
    [line] = [
        line for line in plan_changes(before, after, planner.moves) if line.startswith("moved ")
    ]
    old_type = before.endpoints[old.endpoint].instance_type
    assert line.startswith(f"moved chat: {old.endpoint} ({old_type}) -> ic-chat-001 ({old_type})")
    assert line.endswith("; its component's name ends in -ic-chat-001")
    # the plan file keeps it, and the next re-plan too (the model stays where it is)
    written = plan_from_json(after.to_json())
    assert written.placements["chat"].moved_from == old.endpoint
    again = Planner(grouped, written).run()
    assert again.placements["chat"].moved_from == old.endpoint
    assert again.to_json() == after.to_json()
    # moved back, it records the endpoint it left this time
    back = Planner(catalog([CHAT, OTHER]), again).run().placements["chat"]
    assert back.endpoint != "ic-chat-001"
    assert (back.moved_from, back.component_suffix) == ("ic-chat-001", back.endpoint)


def test_a_plan_file_writes_moved_from_only_for_moved_models():
    # Plan files without moves read and write as before.
    text = plan_fleet(catalog([CHAT, OTHER])).to_json()
    assert all("moved_from" not in p for p in json.loads(text)["placements"])
    plan = plan_from_json(text)
    assert {p.moved_from for p in plan.placements.values()} == {""}
    assert plan.to_json() == text


def test_the_changes_name_endpoints_added_and_removed_with_their_instances():
    small = {"name": "m", "architecture": "llama-3.1-8b", "peak_rpm": 60, "instance_family": "g6e"}
    before = plan_from_json(plan_fleet(catalog([small])).to_json())
    planner = Planner(catalog([{**small, "architecture": "llama-3.1-70b"}]), before)
    after = planner.run()
    (old,) = before.endpoints.values()
    (new,) = after.endpoints.values()
    assert old.name != new.name
    lines = plan_changes(before, after, planner.moves)
    assert (
        f"endpoints added: {new.name} ({new.kind}, {new.min_instances}-{new.max_instances} x "
        f"{new.instance_type}, stack {new.stack})"
    ) in lines
    assert (
        f"endpoints removed: {old.name} ({old.kind}, {old.min_instances}-{old.max_instances} x "
        f"ml.g6e.xlarge, stack {old.stack})"
    ) in lines


def _grown(count: int, added: int, limits: Limits | None = None) -> tuple[Plan, Planner, Plan]:
    """A realistic catalog of ``count`` models planned, written and read back, and
    re-planned with ``added`` more (``limits`` for the re-plan)."""
    data = realistic_catalog_data(count + added)
    fewer = catalog(data["models"][:count])
    before = plan_from_json(plan_fleet(fewer).to_json())
    planner = Planner(catalog(data["models"]), before, limits=limits or Limits())
    return before, planner, planner.run()


def test_a_replan_puts_new_models_beside_kept_endpoints_with_room_in_full_stacks():
    # A fresh plan fills its stacks to 400 resources; the ten new models join the kept
    # endpoints with room in them (up to 450) rather than open endpoints beside them.
    before, planner, after = _grown(300, 10)
    assert len(before.stacks) > 2
    new = [n for n in after.placements if n not in before.placements]
    shared = [n for n in new if KINDS[after.endpoints[after.placements[n].endpoint].kind].shared]
    assert len(shared) >= 8
    assert {after.placements[n].endpoint for n in shared} <= set(before.endpoints)
    assert planner.opened == {}
    # a kept stack full at 400 took some of them
    full = {s for s in before.stacks if planner.usage[s][0] > Limits().stack_resources}
    assert full and all(used[0] <= Limits().joined_resources for used in planner.usage.values())
    # ... which is cheaper than the endpoints the same models would otherwise open ($6,300 a
    # month; $10,900 before the speech estimate was calibrated: the new Whisper model, at
    # half the rate, needs twice the copies and joins the B200 endpoint at $17,900 a month,
    # against $2,500 on the p4d one it joined before and $1,200 on an endpoint of its own)
    _, _, apart = _grown(300, 10, Limits(joined_resources=400))
    assert set(apart.endpoints) - set(before.endpoints)
    assert plan_cost(after).expected_monthly < plan_cost(apart).expected_monthly - 5_000


def test_a_model_that_opens_an_endpoint_beside_kept_ones_with_room_says_why():
    # Kept stacks at their joining budget: the new models open endpoints, and their
    # reasons, --explain and the changes say which kept endpoint had room and why not.
    before, planner, after = _grown(300, 10, Limits(joined_resources=400))
    assert planner.opened
    for endpoint, why in planner.opened.items():
        opener = after.placements[after.endpoints[endpoint].models[0]]
        assert opener.reason.endswith(f"; opened {endpoint}: {why}")
        for kept in re.findall(r"(\S+) \(ml\.[^)]*\) is in stack (\S+), full: (\d+) of 400", why):
            name, stack, used = kept
            assert before.endpoints[name].stack == stack and int(used) > 390
    p4d = planner.opened["ic-p4d-002"]
    assert p4d.startswith(
        "ic-p4d-001 (ml.p4d.24xlarge, 6 devices free) is in stack fleet-04, full: 397 of 400 "
        "resources, and the model adds 5; "
    )
    lines = plan_changes(before, after, planner.moves, planner.opened)
    assert (
        "endpoint ic-p4d-002 opened for m00300-llama-3-3-70b although kept endpoints had "
        f"room: {p4d}"
    ) in lines


def test_a_new_multi_model_model_joins_its_frameworks_kept_endpoint():
    # Alone, a new multi-model model would get a type chosen for it alone (and an endpoint
    # of its own); on a re-plan it joins a kept endpoint of its framework.
    data = catalog_data(60)
    last = data["models"][-1]
    before = plan_from_json(plan_fleet(catalog(data["models"][:-1])).to_json())
    mme = {e.instance_type for e in before.endpoints.values() if e.kind == "multi-model"}
    alone = plan_fleet(catalog([last]))
    assert {e.instance_type for e in alone.endpoints.values()}.isdisjoint(mme)
    planner = Planner(catalog(data["models"]), before)
    after = planner.run()
    p = after.placements[last["name"]]
    assert set(after.endpoints) == set(before.endpoints)
    assert after.endpoints[p.endpoint].kind == "multi-model"
    assert f"joins {p.endpoint} ({after.endpoints[p.endpoint].instance_type}), a multi-model " in (
        p.reason
    )


def test_an_isolated_model_says_it_does_not_join_the_hub_models_endpoint():
    revision = "1605565b47bb9346c5515c34102e054115b4f98b"
    hub = {"hub": "meta-llama/Llama-3.1-70B-Instruct", "revision": revision}
    big = {"name": "big", "architecture": "llama-3.1-70b", "peak_rpm": 30, "instance_family": "p4d"}
    before = plan_from_json(plan_fleet(catalog([{**big, **hub}])).to_json())
    assert list(before.endpoints) == ["ic-p4d-hub-001"]
    small = {"name": "small", "architecture": "llama-3.1-8b", "peak_rpm": 30, "active_hours": 12}
    planner = Planner(catalog([{**big, **hub}, {**small, "cold_start_tolerant": True}]), before)
    after = planner.run()
    why = (
        "ic-p4d-hub-001 (ml.p4d.24xlarge, 4 devices free) serves hub models (no network "
        "isolation) and the model is network-isolated"
    )
    p = after.placements["small"]
    assert planner.opened == {p.endpoint: why}
    assert p.reason.endswith(f"; opened {p.endpoint}: {why}")
