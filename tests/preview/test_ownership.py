"""What `pulumi up` does about ownership, in the preview: refused, adopt, read (shared).

Both sides are built here: the render of a stack, and what a cluster would hold (each
object with the labels the cluster has). The real kubectl and API server are read in
tests/cluster/test_preview_live.py. Every test here fails without the ownership marks
(trainjobs/preview/ownership.py): the plan then says create/update/same/delete for them.
"""

from __future__ import annotations

import argparse
import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pulumi
import pytest
from rich.console import Console

from tests.support.pulumi_harness import run_program
from trainjobs.check import run
from trainjobs.cli import main
from trainjobs.cli.preview import _show_plans
from trainjobs.components import program
from trainjobs.components.ownership import reading
from trainjobs.errors import SpecError
from trainjobs.k8s.ownership import STACK_LABEL, ObjectKey
from trainjobs.preview.jsonout import plans_document, schema
from trainjobs.preview.objects import Key, PreviewObject, Side, side_from_rendering
from trainjobs.preview.ownership import Declared, Identity, LiveOwners, identity_of, mark
from trainjobs.preview.plan import Plan, make_plan
from trainjobs.preview.report import print_plan
from trainjobs.spec.load import parse_stack

SOURCE = "stacks/Pulumi.test.yaml"
"""Where the stack program (under mocks, stack ``test``) says its settings are."""
MINE = Identity("trainjobs", "test")
NAMESPACE: Key = ("", "Namespace", "", "training")
SHARED: Key = ("", "Namespace", "", "kubeflow")


def _job(namespace: str = "training") -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "tf:2"}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": namespace},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            }
        },
        "trainjobs": {"target": "pods"},
    }


def _config(**settings: Any) -> dict[str, Any]:
    config = {"trainjobs:namespaces": ["training"], "trainjobs:jobs": [_job()]}
    config.update({f"trainjobs:{k}": v for k, v in settings.items()})
    return config


def _render(config: dict[str, Any]) -> tuple[Side, Declared]:
    stack = parse_stack(config, source=SOURCE)
    side = side_from_rendering(run(stack), SOURCE)
    return side, Declared.of(stack, side)


def _cluster(new: Side, labels: Mapping[Key, Mapping[str, str]]) -> Side:
    """A cluster holding the render's objects named in ``labels``, with those labels."""
    objects = {k: PreviewObject(new.objects[k].manifest, source="cluster") for k in labels}
    return Side("cluster", objects, {k: dict(v) for k, v in labels.items()})


def _live_plan(
    config: dict[str, Any],
    labels: Mapping[Key, Mapping[str, str]],
    shared: Mapping[str, bool] | None = None,
) -> Plan:
    new, declared = _render(config)
    cluster = _cluster(new, labels)
    owners = LiveOwners(MINE, cluster.labels, dict(shared or {}))
    return mark(make_plan(cluster, new, secret_key=b"k"), new, declared, owners)


def _text(plan: Plan) -> str:
    buffer = io.StringIO()
    out = Console(file=buffer, color_system=None, soft_wrap=True, markup=False, width=400)
    print_plan(plan, out, diffs=False)
    return buffer.getvalue()


def _rows(text: str) -> list[list[str]]:
    """The table's rows as cells (columns are two or more spaces apart)."""
    return [re.split(r"\s{2,}", line.rstrip()) for line in text.splitlines() if "  " in line]


def _document(plan: Plan) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(plans_document([(plan, "test")]))
    jsonschema.Draft202012Validator(schema()).validate(document)
    return document


def _program_message(config: dict[str, Any], labels: Mapping[Key, Mapping[str, str]]) -> str:
    """What the stack program (under mocks, the cluster read through ``labels``) stops with."""

    def reader(keys: Any) -> dict[ObjectKey, Mapping[str, str] | None]:
        found = {(k[1], k[2], k[3]): v for k, v in labels.items()}
        return {k: found.get((k.kind, k.namespace, k.name)) for k in keys}

    with reading(reader):
        try:
            run_program(program, config)
        except pulumi.RunError as exc:
            return str(exc)
    return ""


def test_an_existing_namespace_of_someone_else_is_refused_as_pulumi_up_refuses_it() -> None:
    """The same finding (rule, message, fix, path) as the stack program's; without the
    marks the namespace read as `same` and the preview exited as if `up` would run."""
    labels = {NAMESPACE: {"team": "search"}}
    plan = _live_plan(_config(), labels)
    (refused,) = [o for o in plan.objects if o.action == "refused"]
    assert refused.key == NAMESPACE
    (finding,) = plan.refusals
    assert finding.path == "trainjobs:namespaces[0]"
    program_says = _program_message(_config(), labels)
    assert finding.render() in program_says.splitlines()
    text = _text(plan)
    assert [
        "!",
        "Namespace",
        "-",
        "training",
        "refused",
        "it has no trainjobs.dev/stack label",
    ] in (_rows(text))
    assert f"`pulumi up` would stop before changing anything:\n  {finding.render()}\n" in text
    assert "    ! 1 refused\n" in text
    document = _document(plan)["plans"][0]
    (obj,) = [o for o in document["objects"] if o["action"] == "refused"]
    assert obj["symbol"] == "!" and obj["refusal"]["code"] == "stack.not_ours"
    assert document["ownership"]["refused"] == [finding.as_json()]
    assert document["ownership"]["stackLabel"] == "trainjobs.test"
    assert document["summary"]["refused"] == 1


def test_an_object_of_another_stack_is_refused_naming_that_stack() -> None:
    pod: Key = ("", "Pod", "training", "tf-worker-0")
    labels = {pod: {STACK_LABEL: "trainjobs.prod"}}
    plan = _live_plan(_config(), labels)
    (refused,) = [o for o in plan.objects if o.action == "refused"]
    assert refused.key == pod
    assert refused.ownership is not None
    assert refused.ownership.because == "it belongs to stack trainjobs.prod"
    assert "`pulumi up` refuses job tf: 1 Pod of it already exists and was not made" in (
        _text(plan)
    )
    assert [f.render() for f in plan.refusals] == [
        line
        for line in _program_message(_config(), labels).splitlines()
        if "Pod training/tf-worker-0" in line
    ]


def test_an_adopted_namespace_shows_as_adopt_in_text_and_json() -> None:
    labels = {NAMESPACE: {"team": "search"}}
    plan = _live_plan(_config(adopt=["Namespace/training"]), labels)
    assert plan.refusals == ()
    adopted = [o for o in plan.objects if o.action == "adopt"]
    assert [o.key for o in adopted] == [NAMESPACE]
    text = _text(plan)
    assert ["=", "Namespace", "-", "training", "adopt", "trainjobs:adopt"] in _rows(text)
    assert (
        "adopts Namespace training: it exists and was not made by this stack (it has no "
        "trainjobs.dev/stack label); trainjobs:adopt names it, so `pulumi up` takes it over "
        "(labels it as this stack's) and `pulumi destroy` will delete it"
    ) in text
    assert "    = 1 to adopt\n" in text
    document = _document(plan)["plans"][0]
    (obj,) = [o for o in document["objects"] if o["kind"] == "Namespace"]
    assert (obj["action"], obj["symbol"]) == ("adopt", "=")
    assert document["summary"]["adopt"] == 1
    assert document["ownership"]["refused"] == []


def test_the_stacks_own_objects_plan_as_ever() -> None:
    """Objects labelled as this stack's: the plan and its output are those without marks."""
    new, declared = _render(_config())
    labels = {key: {STACK_LABEL: MINE.label} for key in new.objects}
    cluster = _cluster(new, labels)
    plain = make_plan(cluster, new, secret_key=b"k")
    marked = mark(plain, new, declared, LiveOwners(MINE, cluster.labels, {}))
    assert marked is plain
    assert not marked.changed and marked.ownership is None
    assert "ownership" not in _document(marked)["plans"][0]


def test_a_shared_namespace_is_read_never_created_or_deleted() -> None:
    """Moved from namespaces to sharedNamespaces: the last render (and the cluster) hold
    it, the new render does not. Without the marks: `- delete` (and everything in it)."""
    before, _ = _render(_config(namespaces=["training", "kubeflow"]))
    new, declared = _render(_config(sharedNamespaces=["kubeflow"]))
    cluster = Side(
        "cluster",
        {**before.objects},
        {k: {STACK_LABEL: MINE.label} for k in before.objects},
    )
    live = LiveOwners(MINE, cluster.labels, {"kubeflow": True})
    plan = mark(make_plan(cluster, new, secret_key=b"k"), new, declared, live)
    (read,) = [o for o in plan.objects if o.key == SHARED]
    assert read.action == "read"
    assert not plan.changed and plan.refusals == ()
    text = _text(plan)
    assert [">", "Namespace", "-", "kubeflow", "read (shared)", "trainjobs:sharedNamespaces"] in (
        _rows(text)
    )
    assert "    > 1 read (shared)\n    no changes." in text
    assert _document(plan)["plans"][0]["summary"]["read"] == 1
    # Against the last render alike (nothing read): read, not delete.
    plain = mark(make_plan(before, new, secret_key=b"k"), new, declared)
    assert [o.action for o in plain.objects if o.key == SHARED] == ["read"]


def test_a_missing_shared_namespace_is_refused() -> None:
    """The program reads it (Namespace.get): `pulumi up` stops when it is not there."""
    plan = _live_plan(
        _config(namespaces=[], sharedNamespaces=["kubeflow"], jobs=[_job("kubeflow")]),
        {},
        shared={"kubeflow": False},
    )
    (refused,) = [o for o in plan.objects if o.action == "refused"]
    assert refused.key == SHARED
    (finding,) = plan.refusals
    assert finding.path == "trainjobs:sharedNamespaces[0]"
    assert finding.hint == (
        "create it first (kubectl create namespace kubeflow), or move it to "
        "trainjobs:namespaces for the stack to create and own it"
    )


def test_without_the_cluster_adopt_entries_show_as_declared_intent() -> None:
    new, declared = _render(_config(adopt=["Namespace/training", "ConfigMap/x/y"]))
    plan = mark(make_plan(Side("nothing stored yet"), new, secret_key=b"k"), new, declared)
    assert [o.key for o in plan.objects if o.action == "adopt"] == [NAMESPACE]
    assert plan.refusals == ()
    text = _text(plan)
    assert ["=", "Namespace", "-", "training", "adopt", "trainjobs:adopt"] in _rows(text)
    assert "adopts Namespace training if it exists and was not made by this stack" in text
    assert (
        "warning: stacks/Pulumi.test.yaml: trainjobs:adopt: trainjobs:adopt names "
        "'ConfigMap/x/y', which the stack does not declare"
    ) in text


def test_a_stack_whose_name_is_not_known_says_ownership_was_not_checked() -> None:
    new, declared = _render(_config())
    cluster = _cluster(new, {NAMESPACE: {}})
    live = LiveOwners(None, cluster.labels, {}, "the stack's name is not known")
    plan = mark(make_plan(cluster, new, secret_key=b"k"), new, declared, live)
    assert plan.refusals == ()
    assert plan.ownership is not None
    (warning,) = plan.ownership.warnings
    assert warning.code == "preview.ownership_unchecked"
    assert "pass --stack-name NAME" in warning.hint


def test_a_refusal_exits_4_even_with_json() -> None:
    plan = _live_plan(_config(), {NAMESPACE: {}})
    args = argparse.Namespace(json=True, quiet=False, no_diff=False)
    assert _show_plans([(plan, "test")], args) == 4


def test_the_stack_and_project_names_come_from_the_files(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: platform\nruntime: python\n")
    (tmp_path / "stacks").mkdir()
    stack = tmp_path / "stacks" / "Pulumi.prod.yaml"
    assert identity_of(stack) == Identity("platform", "prod")
    assert identity_of(stack).label == "platform.prod"  # type: ignore[union-attr]
    assert identity_of(stack, project="p", stack="s") == Identity("p", "s")
    assert identity_of(tmp_path / "job.yaml") is None
    assert identity_of(tmp_path / "job.yaml", stack="dev") == Identity("platform", "dev")
    (tmp_path / "Pulumi.yaml").write_text("runtime: python\n")
    with pytest.raises(SpecError, match="the project file has no usable name"):
        identity_of(stack)
    assert identity_of(stack, project="p") == Identity("p", "prod")


def test_names_for_the_cluster_need_live_and_one_stack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.a.yaml"
    stack.write_text("config: {}\n")
    assert main(["preview", str(stack), "--stack-name", "a"]) == 2
    assert "--stack-name names the stack whose objects --live tells" in capsys.readouterr().err
    assert main(["preview", str(stack), str(stack), "--live", "--stack-name", "a"]) == 2
    assert "--stack-name names one stack" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["preview", str(stack), "--live", "--stack-name", "org/proj/a"])
    assert exited.value.code == 2
    assert "not a Pulumi name" in capsys.readouterr().err
    assert not (tmp_path / ".trainjobs").exists()
