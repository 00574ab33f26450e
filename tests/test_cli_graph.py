"""``trainjobs graph``: Mermaid on stdout, SVG/Mermaid/DOT files written whole, errors exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import STACKS
from trainjobs.cli import main

DEMO = str(STACKS / "Pulumi.demo.yaml")


def test_mermaid_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", DEMO]) == 0
    out = capsys.readouterr().out
    assert out.startswith("---\ntitle: stack demo\n---\nflowchart LR\n")
    assert '  subgraph u1["job kubeflow/mnist<br/>TFJob, pods target"]\n' in out


@pytest.mark.parametrize(
    ("suffix", "start"), [(".svg", "<?xml"), (".mmd", "---"), (".dot", "digraph")]
)
def test_files_by_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str, start: str
) -> None:
    target = tmp_path / "pictures" / f"demo{suffix}"
    assert main(["graph", DEMO, "-o", str(target)]) == 0
    assert capsys.readouterr().out == f"wrote {target}: 4 units, 18 objects\n"
    assert target.read_text().startswith(start)
    assert [p.name for p in target.parent.iterdir()] == [target.name]


def test_an_unknown_suffix_and_a_bad_stack_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["graph", DEMO, "-o", str(tmp_path / "demo.png")]) == 2
    assert capsys.readouterr().err == (
        f"error: cannot tell the format of '{tmp_path / 'demo.png'}': name it .svg "
        "(Graphviz), .mmd or .md (Mermaid) or .dot (Graphviz source)\n"
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t}\nspec:\n"
        "  tfReplicaSpecs:\n    Worker:\n      template:\n"
        "        spec: {hostPID: true, containers: [{name: tensorflow, image: 'tf:2'}]}\n"
    )
    out = tmp_path / "bad.svg"
    assert main(["graph", str(bad), "-o", str(out)]) == 2
    assert "pss.baseline.host_namespaces" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [bad]
