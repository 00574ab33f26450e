"""Field-level differences and key alignment."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trainjobs.errors import NO_VALUE
from trainjobs.k8s.changes import FieldChange, align_keys, field_changes


def test_changes_name_the_place_and_the_values() -> None:
    old = {"spec": {"containers": [{"image": "a", "env": [{"name": "X"}]}], "gone": 1}}
    new = {"spec": {"containers": [{"image": "b", "env": []}], "added": True}}
    assert field_changes(old, new) == [
        FieldChange(("spec", "containers", 0, "image"), "update", "a", "b"),
        FieldChange(("spec", "containers", 0, "env", 0), "remove", old={"name": "X"}),
        FieldChange(("spec", "gone"), "remove", old=1),
        FieldChange(("spec", "added"), "add", new=True),
    ]


def test_paths_read_the_way_users_write_them() -> None:
    change = FieldChange(("metadata", "labels", "training.kubeflow.org/job-name"), "update")
    assert change.text == "metadata.labels['training.kubeflow.org/job-name']"
    assert FieldChange(("spec", "containers", 0, "image"), "update").text == (
        "spec.containers[0].image"
    )


def test_a_value_of_another_type_is_one_change() -> None:
    assert field_changes({"a": {"b": 1}}, {"a": [1]}) == [
        FieldChange(("a",), "update", {"b": 1}, [1])
    ]


def test_true_is_not_one_but_one_is_one_point_zero() -> None:
    assert field_changes({"a": True}, {"a": 1}) == [FieldChange(("a",), "update", True, 1)]
    assert field_changes({"a": 1}, {"a": 1.0}) == []


def test_absent_values_are_marked() -> None:
    (change,) = field_changes({}, {"a": 1})
    assert change.old is NO_VALUE and change.new == 1


def test_align_keys_follows_the_new_order_and_keeps_old_only_keys_last() -> None:
    old = {"b": 1, "gone": 0, "a": {"y": 1, "x": 2}}
    new = {"a": {"x": 2, "y": 1}, "b": 1}
    aligned = align_keys(old, new)
    assert list(aligned) == ["a", "b", "gone"]
    assert list(aligned["a"]) == ["x", "y"]
    assert aligned == old


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=50)
@given(_json)
def test_a_value_has_no_changes_against_itself(value: Any) -> None:
    assert field_changes(value, value) == []


@settings(max_examples=50)
@given(_json, _json)
def test_changes_exactly_when_different(old: Any, new: Any) -> None:
    different = _strictly_different(old, new)
    assert bool(field_changes(old, new)) == different


def _strictly_different(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is not type(b) or a != b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() != b.keys() or any(_strictly_different(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) != len(b) or any(_strictly_different(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is not type(b) or a != b
