"""The generic gang mechanism: decorations, minResources arithmetic, scheduler flags."""

from __future__ import annotations

from trainjobs.plan import GangFacts, GangMember
from trainjobs.platform.gang import GangScheduler, _sum, decorate, min_member

TEMPLATE = {"spec": {"schedulerName": "mine", "containers": [{"name": "c", "image": "i"}]}}
KEEPS = GangFacts((GangMember("Worker", 2, "worker"),), 2)
REPLACES = GangFacts((GangMember("Worker", 2),), 2, replace_scheduler_name=True)


def test_the_flag_value_selects_the_mechanism() -> None:
    assert GangScheduler.from_flag("volcano") == GangScheduler("volcano", "volcano")
    assert GangScheduler.from_flag("my-sched") == GangScheduler("scheduler-plugins", "my-sched")
    assert GangScheduler.default("scheduler-plugins").scheduler_name == (
        "scheduler-plugins-scheduler"
    )


def test_a_users_scheduler_is_kept_or_replaced_as_the_operator_does() -> None:
    volcano = GangScheduler("volcano", "volcano")
    kept = decorate(TEMPLATE, "job", "worker", KEEPS, volcano)
    assert kept["spec"]["schedulerName"] == "mine"
    assert kept["metadata"]["annotations"] == {
        "scheduling.k8s.io/group-name": "job",
        "volcano.sh/task-spec": "worker",
    }
    replaced = decorate(TEMPLATE, "job", "", REPLACES, volcano)
    assert replaced["spec"]["schedulerName"] == "volcano"
    assert replaced["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "job"}
    assert TEMPLATE["spec"]["schedulerName"] == "mine"  # the input is never changed


def test_quantities_add_up_in_their_own_unit() -> None:
    assert _sum([2, 3]) == 5
    assert _sum(["4Gi", "4Gi"]) == "8Gi"
    assert _sum(["500m", "1"]) == "1500m"
    assert _sum(["1Gi", "512Mi"]) == "1610612736"
    assert _sum(["2", "2"]) == "4"


def test_min_available_overrides_the_default() -> None:
    assert min_member(KEEPS, None) == 2
    assert min_member(KEEPS, {"minAvailable": 1}) == 1
