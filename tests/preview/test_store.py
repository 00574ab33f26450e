"""The last render per stack under .trainjobs/: where, what, and written only whole."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES, ROOT, STACKS
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import load_all
from trainjobs.output import OutputError
from trainjobs.preview import compare
from trainjobs.preview.compare import preview_stack
from trainjobs.preview.objects import Side, side_from_manifests
from trainjobs.preview.store import Store, project_root, stack_name

SECRET_JOB = """apiVersion: v1
kind: Secret
metadata: {name: s, namespace: ns}
stringData: {password: hunter2}
"""


def test_where_each_stack_is_stored(tmp_path: Path) -> None:
    assert project_root(STACKS / "Pulumi.demo.yaml") == ROOT
    assert project_root(EXAMPLES / "tf-mnist" / "tfjob.yaml") == EXAMPLES / "tf-mnist"
    assert stack_name(STACKS / "Pulumi.demo.yaml") == "demo"
    (tmp_path / "Pulumi.yaml").write_text("name: x\n")
    (tmp_path / "jobs").mkdir()
    job = tmp_path / "jobs" / "mnist.yaml"
    assert stack_name(job, tmp_path) == "jobs_mnist"
    store = Store.for_stack(job)
    assert store.directory == tmp_path / ".trainjobs" / "jobs_mnist"
    assert Store.for_stack(job, tmp_path / "elsewhere").directory == (
        tmp_path / "elsewhere" / "jobs_mnist"
    )


def test_the_repository_ignores_the_store() -> None:
    assert ".trainjobs/" in (ROOT / ".gitignore").read_text().splitlines()


def _copy_example(tmp_path: Path) -> Path:
    job = tmp_path / "tfjob.yaml"
    job.write_text((EXAMPLES / "tf-mnist" / "tfjob.yaml").read_text())
    return job


def test_first_preview_creates_everything_then_nothing_changes(tmp_path: Path) -> None:
    job = _copy_example(tmp_path)
    first = preview_stack(job, target="pods")
    assert first.plan.old_label == "nothing stored yet"
    assert first.plan.counts()["create"] == 8
    assert not first.store.render_file.exists()
    first.save()
    assert first.store.render_file.read_text().startswith("# The last render")
    assert stat.S_IMODE(first.store.key_file.stat().st_mode) == 0o600
    second = preview_stack(job, target="pods")
    assert second.plan.old_label == "the last preview"
    assert not second.plan.changed
    job.write_text(job.read_text().replace("summaries:1.0", "summaries:1.1"))
    third = preview_stack(job, target="pods")
    assert third.plan.counts()["replace"] == 4


def test_secrets_are_stored_as_fingerprints_and_still_compare(tmp_path: Path) -> None:
    stored = Store(tmp_path / "s", "s")
    key = stored.key()
    manifests = [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": "ns"},
            "stringData": {"password": "<redacted:0123456789ab>"},
        }
    ]
    stored.save(manifests, key)
    assert stored.key() == key
    side = stored.load()
    assert side is not None
    (obj,) = side.objects.values()
    assert obj.manifest["stringData"] == {"password": "<redacted:0123456789ab>"}


def test_a_preview_stores_no_secret_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_render(path: Path, **_: object) -> Side:
        return side_from_manifests([(load_all(SECRET_JOB)[0], str(path))], str(path))

    monkeypatch.setattr(compare, "render_side", fake_render)
    stack = tmp_path / "Pulumi.s.yaml"
    stack.write_text("config: {}\n")
    done = preview_stack(stack)
    done.save()
    text = done.store.render_file.read_text()
    assert "hunter2" not in text and "password: <redacted:" in text
    assert not preview_stack(stack).plan.changed


def test_a_failed_write_leaves_the_old_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = Store(tmp_path / "s", "s")
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}
    stored.save([namespace], b"k")
    before = stored.render_file.read_text()

    def broken(*_: object, **__: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("trainjobs.preview.store.os.replace", broken)
    with pytest.raises(OutputError, match="disk full; the previous one is unchanged"):
        stored.save([{**namespace, "metadata": {"name": "b"}}], b"k")
    assert stored.render_file.read_text() == before
    assert sorted(p.name for p in stored.directory.iterdir()) == ["key", "last.yaml"]


def test_a_file_where_the_store_folder_belongs_is_refused(tmp_path: Path) -> None:
    # `preview --state-dir FILE` said to delete FILE/<stack>, which cannot exist.
    job = _copy_example(tmp_path)
    (tmp_path / "state").write_text("mine\n")
    with pytest.raises(OutputError) as caught:
        Store.for_stack(job, tmp_path / "state")
    assert str(caught.value) == (
        f"{tmp_path / 'state'} is a file, where the preview keeps its state in a folder: "
        "pass --state-dir a folder, or move the file away, and preview again; nothing was "
        "written"
    )
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "tfjob").write_text("mine\n")
    with pytest.raises(OutputError, match=r"other/tfjob is a file"):
        Store.for_stack(job, tmp_path / "other")
    assert (tmp_path / "state").read_text() == "mine\n"


def test_a_damaged_store_is_bad_input_with_a_fix(tmp_path: Path) -> None:
    stored = Store(tmp_path / "s", "s")
    stored.directory.mkdir()
    stored.render_file.write_text("a: [\n")
    with pytest.raises(SpecError) as caught:
        stored.load()
    assert caught.value.findings[0].hint == f"delete {stored.directory} and preview again"
