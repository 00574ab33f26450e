"""The table `trainjobs sandbox deploy` (and `make demo`) prints after the up."""

from __future__ import annotations

from trainjobs.sandbox.deploy import READ_ONLY, _object_row, _table


def _state_entry(kind: str, name: str, *, external: bool = False) -> dict[str, object]:
    entry: dict[str, object] = {
        "type": f"kubernetes:core/v1:{kind}",
        "outputs": {"kind": kind, "metadata": {"name": name}},
    }
    if external:
        entry["external"] = True
    return entry


def test_a_shared_namespace_is_listed_as_read_not_made() -> None:
    shared = _object_row(_state_entry("Namespace", "kubeflow", external=True))
    own = _object_row(_state_entry("Namespace", "training"))
    assert (shared.made_by, own.made_by) == (READ_ONLY, "the stack")
    lines = _table([shared, own], []).splitlines()
    assert lines[1].split() == ["Namespace", "-", "kubeflow", "read", "(shared)"]
    assert lines[2].split() == ["Namespace", "-", "training", "the", "stack"]
