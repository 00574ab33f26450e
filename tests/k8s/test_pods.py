"""Where a pod's containers are: malformed lists and entries are passed over."""

from __future__ import annotations

from trainjobs.k8s.pods import containers, each_container


def test_containers_of_a_template_leave_out_what_is_not_a_mapping() -> None:
    template = {"spec": {"containers": [{"name": "a"}, "junk"], "initContainers": [{"name": "i"}]}}
    assert containers(template) == [{"name": "a"}]
    assert containers(template, "initContainers") == [{"name": "i"}]
    assert containers({}) == []
    assert containers({"spec": {"containers": None}}) == []


def test_each_container_walks_the_lists_in_the_order_asked() -> None:
    spec = {
        "containers": [{"name": "a"}, 3],
        "initContainers": [{"name": "i"}],
        "ephemeralContainers": "not a list",
    }
    assert [(f, i, c["name"]) for f, i, c in each_container(spec)] == [
        ("initContainers", 0, "i"),
        ("containers", 0, "a"),
    ]
    assert [f for f, _, _ in each_container(spec, ("containers", "initContainers"))] == [
        "containers",
        "initContainers",
    ]
