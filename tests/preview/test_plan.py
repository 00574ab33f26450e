"""Plans: one action per object, totals, and the unified diff of each change."""

from __future__ import annotations

from typing import Any

from tests.preview.jobs import example, render, set_image
from trainjobs.preview.objects import Side, side_from_manifests
from trainjobs.preview.plan import make_plan


def _side(*manifests: dict[str, Any]) -> Side:
    return side_from_manifests([(m, "x.yaml") for m in manifests], "side")


def _svc(name: str, port: int = 80, cluster_ip: str = "None") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"clusterIP": cluster_ip, "ports": [{"port": port}]},
    }


def test_each_action_and_the_totals() -> None:
    old = _side(_svc("same"), _svc("updated"), _svc("replaced"), _svc("deleted"))
    new = _side(
        _svc("created"), _svc("same"), _svc("updated", 81), _svc("replaced", cluster_ip="1.2.3.4")
    )
    plan = make_plan(old, new)
    assert [(o.key[3], o.action) for o in plan.objects] == [
        ("created", "create"),
        ("same", "same"),
        ("updated", "update"),
        ("replaced", "replace"),
        ("deleted", "delete"),
    ]
    assert plan.counts() == {"create": 1, "update": 1, "replace": 1, "delete": 1, "same": 1}
    assert plan.changed
    assert [o.key[3] for o in plan.changes] == ["created", "updated", "replaced", "deleted"]


def test_identical_sides_change_nothing() -> None:
    mnist = [example("tf-mnist")]
    plan = make_plan(render(mnist), render(mnist))
    assert not plan.changed
    assert plan.counts()["same"] == 8


def test_the_unified_diff_shows_only_what_changed() -> None:
    mnist = [example("tf-mnist")]
    plan = make_plan(render(mnist), render(mnist, edit=set_image("tf:2")))
    chief = next(o for o in plan.objects if o.key[3] == "mnist-chief-0" and o.kind == "Pod")
    assert chief.action == "replace"
    assert chief.unified_diff("old", "new") == (
        "--- old: Pod kubeflow/mnist-chief-0\n"
        "+++ new: Pod kubeflow/mnist-chief-0\n"
        "@@ -12,7 +12,7 @@\n"
        " spec:\n"
        "   containers:\n"
        "   - name: tensorflow\n"
        "-    image: kubeflow/tf-mnist-with-summaries:1.0\n"
        "+    image: tf:2\n"
        "     command:\n"
        "     - python\n"
        "     - /var/tf_mnist/mnist_with_summaries.py\n"
    )


def test_key_order_alone_is_no_change_and_no_diff_noise() -> None:
    old = _svc("s")
    new = {"kind": "Service", "apiVersion": "v1", "spec": old["spec"], "metadata": old["metadata"]}
    plan = make_plan(_side(old), _side(new))
    assert not plan.changed
    changed = {**new, "spec": {"ports": [{"port": 81}], "clusterIP": "None"}}
    (obj,) = make_plan(_side(old), _side(changed)).objects
    assert obj.unified_diff().count("\n-") == 1


def test_created_and_deleted_objects_diff_against_nothing() -> None:
    plan = make_plan(_side(), _side(_svc("s")))
    text = plan.objects[0].unified_diff("a", "b")
    assert text.startswith("--- /dev/null\n+++ b: Service ns/s\n")


def test_secret_values_never_appear_and_changes_still_show() -> None:
    def secret(value: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "ssh", "namespace": "ns"},
            "stringData": {"id_rsa": value},
        }

    plan = make_plan(_side(secret("hunter2")), _side(secret("hunter3")), secret_key=b"k")
    (obj,) = plan.objects
    assert obj.action == "replace"
    text = obj.unified_diff()
    assert "hunter" not in text
    assert "<redacted:" in text
    same = make_plan(_side(secret("hunter2")), _side(secret("hunter2")), secret_key=b"k")
    assert not same.changed
