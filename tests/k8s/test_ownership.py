"""Who owns an object in a shared cluster (trainjobs.k8s.ownership): the decision the
stack program takes before anything is planned."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from trainjobs.k8s.ownership import (
    STACK_LABEL,
    ObjectKey,
    decide,
    parse_adopt,
    stack_label,
)

NS = ObjectKey("Namespace", "", "kubeflow", "v1")
CM = ObjectKey("ConfigMap", "training", "settings", "v1")
MINE = stack_label("trainjobs", "demo")


def test_the_label_names_project_and_stack() -> None:
    assert MINE == "trainjobs.demo"


@given(st.text(min_size=1, max_size=120), st.text(min_size=1, max_size=120))
def test_the_label_is_always_a_valid_label_value_and_tells_stacks_apart(
    project: str, stack: str
) -> None:
    value = stack_label(project, stack)
    assert len(value) <= 63
    assert re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", value)
    assert stack_label(project, stack + "x") != value


def test_an_absent_object_is_created() -> None:
    decision = decide([NS], {NS: None}, MINE)
    assert decision.refused == () and decision.adopted == ()


def test_the_stacks_own_object_is_its_own() -> None:
    decision = decide([NS], {NS: {STACK_LABEL: MINE}}, MINE)
    assert decision.refused == () and decision.adopted == ()


def test_an_object_someone_else_made_is_refused_with_both_ways_forward() -> None:
    decision = decide(
        [NS, CM],
        {NS: {}, CM: {STACK_LABEL: "platform.prod"}},
        MINE,
        paths={NS: "trainjobs:namespaces[0]"},
        shared_hint=True,
    )
    first, second = decision.refused
    assert first.path == "trainjobs:namespaces[0]"
    assert first.message.startswith("Namespace kubeflow already exists in the cluster")
    assert "it has no trainjobs.dev/stack label" in first.message
    assert "pulumi destroy` would then delete it" in first.message
    assert "another name" in first.hint
    assert "add 'Namespace/kubeflow' to trainjobs:adopt" in first.hint
    assert "trainjobs:sharedNamespaces" in first.hint
    assert "ConfigMap training/settings" in second.message
    assert "it belongs to stack platform.prod" in second.message
    assert "sharedNamespaces" not in second.hint


def test_an_adopted_object_is_taken_over_and_said_so() -> None:
    adopt, problems = parse_adopt(["Namespace/kubeflow", "ConfigMap/training/settings"])
    assert problems == []
    decision = decide([NS, CM], {NS: {}, CM: {}}, MINE, adopt)
    assert decision.refused == ()
    assert decision.adopted == (NS, CM)


def test_an_adopt_entry_naming_nothing_declared_is_a_warning() -> None:
    adopt, _ = parse_adopt(["Namespace/kubeflw"])
    decision = decide([NS], {NS: None}, MINE, adopt)
    (unused,) = decision.unused
    assert unused.severity.value == "warning"
    assert unused.value == "Namespace/kubeflw"


def test_bad_adopt_entries_are_all_found() -> None:
    keys, problems = parse_adopt(["Namespace", "a/b/c/d", 3, "ConfigMap//x"])
    assert keys == ()
    assert [p.path for p in problems] == [f"trainjobs:adopt[{i}]" for i in range(4)]
    assert "Kind/namespace/name" in problems[0].message
    _, not_a_list = parse_adopt("Namespace/kubeflow")
    assert not_a_list[0].path == "trainjobs:adopt"
