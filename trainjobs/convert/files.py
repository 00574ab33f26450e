"""Converting a file: a file of jobs, or a stack config's inline jobs and ``file:`` entries.

Each converted job's text is replaced where it stands (its node's span, found by
composing the YAML), so the rest of the file — other documents, comments, the stack's
settings — is kept byte for byte. A stack's ``file:`` entries are converted in their
own files. Nothing is written here: the caller writes the new texts (``--write``) or
shows their diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from trainjobs.convert.job import Conversion, convert_job
from trainjobs.convert.rules import REFUSED_KIND
from trainjobs.errors import Finding, Severity
from trainjobs.k8s.yamlio import dump_one

__all__ = ["FileConversion", "convert_text", "diff"]

JOBS_KEY = "trainjobs:jobs"


@dataclass
class FileConversion:
    """What converting a file made.

    Attributes:
        texts: each file touched (the given one, files a stack's ``file:`` entries
            name) → (old text, new text); only files with a converted job.
        objects: every document the conversion wrote, in order (what ``convert``
            prints for a file of jobs).
        findings: from every job, paths prefixed with where the job stands.
        converted: how many jobs became TrainJobs.
        stack: whether the file is a stack config (its jobs are rewritten, not printed).
    """

    texts: dict[Path, tuple[str, str]] = field(default_factory=dict)
    objects: list[Mapping[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    converted: int = 0
    stack: bool = False
    keep_refused: bool = False


def _content_end(node: yaml.Node) -> int:
    """Where a node's own text ends: its last scalar, not the comments after it."""
    if isinstance(node, yaml.MappingNode) and node.value and node.flow_style is not True:
        return _content_end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and node.flow_style is not True:
        return _content_end(node.value[-1])
    return int(node.end_mark.index)


def _block(objects: list[Mapping[str, Any]]) -> str:
    return "---\n".join(dump_one(obj) for obj in objects).rstrip("\n")


def _sequence_items(objects: list[Mapping[str, Any]], column: int) -> str:
    """The objects as items of a block sequence whose dashes sit at ``column - 2``."""
    pad = " " * column
    items = []
    for obj in objects:
        lines = dump_one(obj).rstrip("\n").split("\n")
        items.append("\n".join([lines[0], *(pad + line if line else line for line in lines[1:])]))
    return f"\n{' ' * (column - 2)}- ".join(items)


def _replace(text: str, spans: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _load(node: yaml.Node) -> Any:
    return yaml.safe_load(yaml.serialize(node))


def convert_text(
    text: str, source: str, base_dir: Path | None = None, *, keep_refused: bool = False
) -> FileConversion:
    """Convert every v1 job in ``text`` (the file ``source``), a file of jobs or a stack.

    A job of a kind no runtime can run is an error, or with ``keep_refused`` (a stack's
    jobs: the others still move) a warning, the job kept as it is.
    """
    out = FileConversion(keep_refused=keep_refused)
    nodes = list(yaml.compose_all(text))
    stack = (
        len(nodes) == 1
        and isinstance(nodes[0], yaml.MappingNode)
        and any(getattr(k, "value", None) == "config" for k, _ in nodes[0].value)
    )
    spans: list[tuple[int, int, str]] = []
    out.stack = stack
    out.keep_refused = keep_refused or stack
    if stack and isinstance(nodes[0], yaml.MappingNode):
        spans = _stack_spans(nodes[0], source, base_dir, out)
    else:
        for index, node in enumerate(nodes):
            if node is None:
                continue
            doc = _load(node)
            if not isinstance(doc, Mapping):
                continue
            path = f"jobs[{index}]" if len(nodes) > 1 else ""
            done = _take(convert_job(doc, path, source), out, doc)
            if done is not None:
                spans.append((int(node.start_mark.index), _content_end(node), _block(done)))
    if spans:
        out.texts[Path(source)] = (text, _replace(text, spans))
    return out


def _take(
    conversion: Conversion, out: FileConversion, doc: Mapping[str, Any]
) -> list[Mapping[str, Any]] | None:
    findings = conversion.findings
    if out.keep_refused:
        findings = [_kept(f) if f.code == REFUSED_KIND.code else f for f in findings]
    out.findings += findings
    if not conversion.converted:
        out.objects.append(doc)
        return None
    out.objects += conversion.objects
    out.converted += 1
    return list(conversion.objects)


def _stack_spans(
    root: yaml.MappingNode, source: str, base_dir: Path | None, out: FileConversion
) -> list[tuple[int, int, str]]:
    config = next((v for k, v in root.value if getattr(k, "value", None) == "config"), None)
    if not isinstance(config, yaml.MappingNode):
        return []
    jobs = next((v for k, v in config.value if getattr(k, "value", None) == JOBS_KEY), None)
    if not isinstance(jobs, yaml.SequenceNode):
        return []
    spans = []
    for index, item in enumerate(jobs.value):
        doc = _load(item)
        if not isinstance(doc, Mapping):
            continue
        if "file" in doc and base_dir is not None:
            _convert_file(base_dir / str(doc["file"]), out)
            continue
        done = _take(convert_job(doc, f"config.{JOBS_KEY}[{index}]", source), out, doc)
        if done is None:
            continue
        # The item starts right after its "- ", block or flow style alike.
        column = int(item.start_mark.column)
        spans.append(
            (int(item.start_mark.index), _content_end(item), _sequence_items(done, column))
        )
    return spans


def _convert_file(path: Path, out: FileConversion) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return  # the stack's own loading reports a missing file
    inner = convert_text(text, str(path), path.parent, keep_refused=True)
    out.texts.update(inner.texts)
    out.objects += inner.objects
    out.findings += inner.findings
    out.converted += inner.converted


def _kept(finding: Finding) -> Finding:
    return replace(
        finding,
        severity=Severity.WARNING,
        message=f"kept as it is: {finding.message}",
    )


def diff(path: Path, old: str, new: str) -> str:
    """A unified diff of one file's change, as ``git diff`` shows it."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
