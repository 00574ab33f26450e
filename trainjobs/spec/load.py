"""Read jobs and stacks from YAML documents, collecting every finding at once.

Three inputs give the same :class:`StackSpec`:

* a stack config file ``stacks/Pulumi.<stack>.yaml`` (``config: {trainjobs:jobs: [...]}``),
* a plain YAML file of one or more upstream job documents,
* the typed Python API (:meth:`JobEntry.of`).

A ``jobs`` entry is either a job document or ``{file: path}`` naming a job file
relative to the file that lists it; either may carry ``trainjobs:`` options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from trainjobs.errors import NO_VALUE, Finding, SpecError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.yamlio import YamlSyntaxError, load_all
from trainjobs.spec._findings import findings_from_validation_error
from trainjobs.spec.entry import OPTIONS_KEY, TARGETS, JobEntry, JobOptions, Target
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, StackSpec

__all__ = [
    "CONFIG_NAMESPACE",
    "STACK_KEYS",
    "load_path",
    "parse_documents",
    "parse_job",
    "parse_stack",
    "read_documents",
]

CONFIG_NAMESPACE = "trainjobs"
"""The Pulumi config namespace (the project name) of trainjobs' stack keys."""

STACK_KEYS = {"jobs", "target", "k8sVersion", "namespaces"}
MAX_INPUT_BYTES = 20 * 1024 * 1024


def _located(findings: Sequence[Finding], source: str, prefix: str) -> list[Finding]:
    return [f.located(source, prefix) for f in findings]


def parse_job(
    doc: Any,
    *,
    path: str,
    source: str = "",
    base_dir: Path | None = None,
) -> tuple[list[JobEntry], list[Finding]]:
    """One ``jobs`` entry (a job document or ``{file: …}``) → entries and findings."""
    if not isinstance(doc, Mapping):
        return [], [
            Finding(
                code="spec.job_type",
                path=path,
                message="a job must be a mapping with apiVersion, kind, metadata and spec",
                value=doc,
                hint="check the indentation of this entry",
                source=source,
            )
        ]
    body = dict(doc)
    raw_options = body.pop(OPTIONS_KEY, None)
    findings: list[Finding] = []
    options = JobOptions()
    if raw_options is not None:
        try:
            options = JobOptions.model_validate(raw_options)
        except ValidationError as exc:
            findings += _located(
                findings_from_validation_error(exc, JobOptions), source, f"{path}.{OPTIONS_KEY}"
            )
    if "file" in body:
        return _parse_file_entry(body, options, findings, path, source, base_dir)
    api_version, kind = body.get("apiVersion"), body.get("kind")
    framework = (
        REGISTRY.by_kind(api_version, kind)
        if isinstance(api_version, str) and isinstance(kind, str)
        else None
    )
    if framework is None:
        findings.append(_unknown_kind(api_version, kind, path, source))
        return [], findings
    try:
        job = framework.model.model_validate(body)
    except ValidationError as exc:
        findings += _located(findings_from_validation_error(exc, framework.model), source, path)
        return [], findings
    entry = JobEntry(job=job, framework=framework, options=options, path=path, source=source)
    return ([entry] if not findings else []), findings


def _unknown_kind(api_version: Any, kind: Any, path: str, source: str) -> Finding:
    known = ", ".join(REGISTRY.kinds())
    if not api_version or not kind:
        missing = "apiVersion" if not api_version else "kind"
        return Finding(
            code="spec.kind_missing",
            path=f"{path}.{missing}",
            message="required field is missing",
            hint=f"a job names its kind, one of: {known}",
            source=source,
        )
    # A kind may be served at several versions (MPIJob: v2beta1 and v1).
    same_kind = [k.split()[0] for k in REGISTRY.kinds() if k.endswith(f" {kind}")]
    hint = (
        f"{kind} is served as {' or '.join(same_kind)}; change apiVersion"
        if same_kind
        else f"use one of: {known}"
    )
    return Finding(
        code="spec.kind_unknown",
        path=f"{path}.kind",
        message="no framework handles this apiVersion and kind",
        value=f"{api_version} {kind}",
        hint=hint,
        source=source,
    )


def _parse_file_entry(
    body: dict[str, Any],
    options: JobOptions,
    findings: list[Finding],
    path: str,
    source: str,
    base_dir: Path | None,
) -> tuple[list[JobEntry], list[Finding]]:
    extra = sorted(set(body) - {"file"})
    if extra:
        findings.append(
            Finding(
                code="spec.file_entry",
                path=f"{path}.{extra[0]}",
                message="an entry with 'file' may carry only 'trainjobs' options beside it",
                value=extra,
                hint="move the job's fields into the file it names",
                source=source,
            )
        )
    name = body["file"]
    if not isinstance(name, str):
        findings.append(
            Finding(
                code="spec.file_type",
                path=f"{path}.file",
                message="file must be a path",
                value=name,
                hint="e.g. file: ../examples/tf-dist/tfjob.yaml",
                source=source,
            )
        )
        return [], findings
    target = (base_dir or Path.cwd()) / name
    try:
        docs = read_documents(target)
    except SpecError as exc:
        findings += [f if f.path else f.located("", f"{path}.file") for f in exc.findings]
        return [], findings
    entries: list[JobEntry] = []
    for i, doc in enumerate(docs):
        if isinstance(doc, Mapping) and options.target is not None and OPTIONS_KEY not in doc:
            doc = {**doc, OPTIONS_KEY: options.model_dump(exclude_none=True)}
        sub_path = path if len(docs) == 1 else f"{path}[{i}]"
        got, problems = parse_job(doc, path=sub_path, source=str(target), base_dir=target.parent)
        entries += got
        findings += problems
    return entries, findings


def read_documents(path: Path) -> list[Any]:
    """The YAML documents of a file; unreadable, binary, huge or malformed files → SpecError."""
    source = str(path)

    def fail(message: str, hint: str, value: Any = NO_VALUE) -> SpecError:
        return SpecError.from_findings(
            [
                Finding(
                    code="input.file",
                    path="",
                    message=message,
                    value=value,
                    hint=hint,
                    source=source,
                )
            ]
        )

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise fail(f"cannot read the file: {exc.strerror}", "check the path") from None
    if path.is_dir():
        raise fail("is a directory, not a YAML file", "name a stack or job YAML file")
    if size > MAX_INPUT_BYTES:
        raise fail(
            f"the file is {size} bytes; trainjobs reads at most {MAX_INPUT_BYTES}",
            "split the jobs over several files",
        )
    data = path.read_bytes()
    if b"\0" in data:
        raise fail("is a binary file, not YAML", "name a stack or job YAML file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("is not UTF-8 text", "save the file as UTF-8") from None
    try:
        docs = load_all(text, source)
    except YamlSyntaxError as exc:
        raise fail(
            str(exc).removeprefix(f"{source}: "), "fix the YAML syntax at that place"
        ) from None
    if not docs:
        raise fail("holds no YAML documents", "add a job or a stack config")
    return docs


def parse_documents(
    docs: Sequence[Any], *, source: str = "", base_dir: Path | None = None
) -> StackSpec:
    """A job file's documents → a stack of those jobs (SpecError lists every problem)."""
    entries: list[JobEntry] = []
    findings: list[Finding] = []
    for i, doc in enumerate(docs):
        got, problems = parse_job(doc, path=f"jobs[{i}]", source=source, base_dir=base_dir)
        entries += got
        findings += problems
    _raise_if_errors(findings)
    return StackSpec(jobs=tuple(entries), source=source)


def parse_stack(
    config: Mapping[str, Any], *, source: str = "", base_dir: Path | None = None
) -> StackSpec:
    """A stack's config (``trainjobs:``-prefixed keys, or the bare keys) → StackSpec."""
    values: dict[str, Any] = {}
    for key, value in config.items():
        namespace, sep, bare = str(key).rpartition(":")
        if sep and namespace != CONFIG_NAMESPACE:
            continue  # another provider's or program's config, e.g. kubernetes:context
        values[bare] = value
    findings: list[Finding] = []
    for key in sorted(set(values) - STACK_KEYS):
        findings.append(
            Finding(
                code="stack.unknown_key",
                path=f"{CONFIG_NAMESPACE}:{key}",
                message="unknown stack setting",
                hint="use one of "
                + ", ".join(f"{CONFIG_NAMESPACE}:{k}" for k in sorted(STACK_KEYS)),
                source=source,
            )
        )
    target: Target = "operator"
    raw_target = values.get("target", "operator")
    if raw_target in TARGETS:
        target = cast(Target, raw_target)
    else:
        findings.append(
            Finding(
                code="stack.target",
                path=f"{CONFIG_NAMESPACE}:target",
                message="unknown target",
                value=raw_target,
                hint=f"use one of {', '.join(TARGETS)}",
                source=source,
            )
        )
    k8s_version = values.get("k8sVersion", DEFAULT_K8S_VERSION)
    if not isinstance(k8s_version, str):
        findings.append(
            Finding(
                code="stack.k8s_version",
                path=f"{CONFIG_NAMESPACE}:k8sVersion",
                message='k8sVersion must be a quoted version like "1.32"',
                value=k8s_version,
                hint='quote it: k8sVersion: "1.32" (1.30 unquoted is the number 1.3)',
                source=source,
            )
        )
        k8s_version = DEFAULT_K8S_VERSION
    namespaces = values.get("namespaces", [])
    if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
        findings.append(
            Finding(
                code="stack.namespaces",
                path=f"{CONFIG_NAMESPACE}:namespaces",
                message="namespaces must be a list of names",
                value=namespaces,
                hint="e.g. namespaces: [training]",
                source=source,
            )
        )
        namespaces = []
    jobs = values.get("jobs", [])
    entries: list[JobEntry] = []
    if not isinstance(jobs, list):
        findings.append(
            Finding(
                code="stack.jobs",
                path=f"{CONFIG_NAMESPACE}:jobs",
                message="jobs must be a list",
                value=jobs,
                hint="start each job with '- '",
                source=source,
            )
        )
        jobs = []
    for i, doc in enumerate(jobs):
        got, problems = parse_job(doc, path=f"jobs[{i}]", source=source, base_dir=base_dir)
        entries += got
        findings += problems
    _raise_if_errors(findings)
    return StackSpec(
        jobs=tuple(entries),
        target=target,
        k8s_version=k8s_version,
        namespaces=tuple(namespaces),
        source=source,
    )


def _raise_if_errors(findings: Sequence[Finding]) -> None:
    if any(f.severity.value == "error" for f in findings):
        raise SpecError.from_findings(findings)


def load_path(path: str | Path) -> StackSpec:
    """Load a stack config file or a job file (detected by its content)."""
    file = Path(path)
    docs = read_documents(file)
    first = docs[0]
    is_stack = (
        len(docs) == 1
        and isinstance(first, Mapping)
        and "config" in first
        and "apiVersion" not in first
    )
    if is_stack:
        config = first.get("config") or {}
        if not isinstance(config, Mapping):
            raise SpecError.from_findings(
                [
                    Finding(
                        code="stack.config",
                        path="config",
                        message="config must be a mapping of settings",
                        value=config,
                        hint="e.g. config: {trainjobs:jobs: [...]}",
                        source=str(file),
                    )
                ]
            )
        return parse_stack(config, source=str(file), base_dir=file.parent)
    return parse_documents(docs, source=str(file), base_dir=file.parent)
