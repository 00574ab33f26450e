"""Read jobs and stacks from YAML documents, collecting every finding at once.

Three inputs give the same :class:`StackSpec`:

* a stack config file ``stacks/Pulumi.<stack>.yaml`` (``config: {trainjobs:jobs: [...]}``),
* a plain YAML file of one or more upstream job documents,
* the typed Python API (:meth:`JobEntry.of`).

A ``jobs`` entry is either a job document or ``{file: path}`` naming a job file
relative to the file that lists it; either may carry ``trainjobs:`` options.

Where ``file:`` may point: only ``.yaml``/``.yml`` files, inside the repository of the
file first loaded (the nearest folder above it holding ``.git``, else ``Pulumi.yaml``,
else its own folder), symbolic links resolved. Folders listed in the environment
variable ``TRAINJOBS_FILE_ROOTS`` (separated by ``:``) are allowed too. A file that
names itself again through a chain of ``file:`` entries is refused, and one stack reads
at most ``TRAINJOBS_MAX_FILES`` files (:mod:`trainjobs.limits`).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import ValidationError

from trainjobs import limits
from trainjobs.errors import NO_VALUE, Finding, Rule, Severity, SpecError
from trainjobs.frameworks.base import Framework, loading_stage
from trainjobs.frameworks.capabilities import CarriesDefinitions
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.ownership import ADOPT_KEY, parse_adopt
from trainjobs.k8s.yamlio import InputError, YamlSyntaxError, load_all, read_bounded
from trainjobs.platform import API_VERSION, PLATFORM, Category
from trainjobs.spec._findings import findings_from_validation_error
from trainjobs.spec.entry import (
    OPTIONS_KEY,
    TARGETS,
    DefinitionEntry,
    JobEntry,
    JobOptions,
    PlatformEntry,
    Target,
)
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, DEFAULT_PROFILE, PROFILES, Profile, StackSpec
from trainjobs.targets.names import DEFAULT_TARGET, is_target

__all__ = [
    "ALLOW_NO_JOBS",
    "CONFIG_NAMESPACE",
    "FILE_ROOTS_ENV",
    "LIST_KEYS",
    "STACK_KEYS",
    "FileAccess",
    "Parsed",
    "expand_lists",
    "load_path",
    "parse_documents",
    "parse_entry",
    "parse_job",
    "parse_stack",
    "read_documents",
    "repository_root",
]

CONFIG_NAMESPACE = "trainjobs"
"""The Pulumi config namespace (the project name) of trainjobs' stack keys."""

STACK_KEYS = {
    "jobs",
    "backends",
    "nodePools",
    "queues",
    "operators",
    "target",
    "k8sVersion",
    "namespaces",
    "sharedNamespaces",
    "adopt",
    "podSecurity",
    "ignore",
    "allowNoJobs",
}
"""Every ``trainjobs:<key>`` a stack config may set."""

ALLOW_NO_JOBS = "allowNoJobs"
"""The stack program's own setting (``pulumi config set trainjobs:allowNoJobs true``): a
stack may declare no jobs although its last update had some. Default false. It says
nothing about what the stack renders, so the loader only checks that it is a boolean."""

FILE_ROOTS_ENV = "TRAINJOBS_FILE_ROOTS"
"""Environment variable: extra folders (``:``-separated) ``file:`` entries may read from."""

YAML_SUFFIXES = (".yaml", ".yml")
"""The only files a ``file:`` entry may name."""


def repository_root(start: Path) -> Path:
    """The folder ``file:`` entries of a stack in ``start`` may read below: the nearest
    folder holding ``.git`` (the repository), else ``Pulumi.yaml`` (the project), else
    ``start`` itself."""
    folder = Path(os.path.realpath(start))
    for marker in (".git", "Pulumi.yaml"):
        for candidate in (folder, *folder.parents):
            if (candidate / marker).exists():
                return candidate
    return folder


@dataclass
class FileAccess:
    """Where the ``file:`` entries of one load may point, and what it has read so far.

    Attributes:
        roots: folders a named file must resolve inside (the repository, and those of
            ``TRAINJOBS_FILE_ROOTS``).
        chain: the files being read, outermost first, to refuse a file naming itself.
        read: how many files ``file:`` entries have read so far.
    """

    roots: tuple[Path, ...]
    chain: tuple[Path, ...] = ()
    read: int = 0

    @classmethod
    def below(cls, start: Path) -> FileAccess:
        """Access to the repository of ``start`` (a folder) and ``TRAINJOBS_FILE_ROOTS``."""
        extra = [
            Path(os.path.realpath(p))
            for p in os.environ.get(FILE_ROOTS_ENV, "").split(os.pathsep)
            if p.strip() and "\0" not in p
        ]
        return cls((repository_root(start), *extra))

    def allows(self, resolved: Path) -> bool:
        """Whether ``resolved`` (symbolic links resolved) lies inside one of the roots."""
        return any(resolved == root or root in resolved.parents for root in self.roots)


MAX_ERRORS = 100
"""After this many errors a load stops: nobody reads more, and a file of 200,000 broken
documents would otherwise spend minutes printing them."""


TOO_MANY_ERRORS = Rule(
    "input.too_many_errors",
    f"stopped after {MAX_ERRORS} errors; the rest of the input was not read",
    hint="fix the errors above and run again",
)


def _too_many_errors(parsed: Parsed, source: str) -> bool:
    """Whether to stop; when so, a last finding says the rest were not read."""
    if sum(f.severity is Severity.ERROR for f in parsed.findings) < MAX_ERRORS:
        return False
    parsed.findings.append(TOO_MANY_ERRORS.at("").located(source))
    return True


def _located(findings: Sequence[Finding], source: str, prefix: str) -> list[Finding]:
    return [f.located(source, prefix) for f in findings]


DEFINITION_DUPLICATE = Rule(
    "spec.definition_duplicate",
    "a second {kind} named {name!r}: {first} declares it already",
    hint="rename one, or remove the copy",
)
DEFINITION_UNUSED = Rule(
    "spec.definition_unused",
    "a {kind} is rendered with the jobs that use it, and this render has no {job_kind}",
    hint="add the {job_kind} that uses it, or apply it with kubectl",
)


@dataclass
class Parsed:
    """What some documents held: jobs, platform resources, and the findings on the way."""

    jobs: list[JobEntry] = field(default_factory=list)
    platform: list[PlatformEntry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    definitions: list[DefinitionEntry] = field(default_factory=list)
    """Documents jobs refer to by name (Trainer runtimes), declared beside them."""

    def add(self, other: Parsed) -> None:
        self.jobs += other.jobs
        self.platform += other.platform
        self.findings += other.findings
        self.definitions += other.definitions

    def bound(self) -> tuple[JobEntry, ...]:
        """The jobs, each with a framework that knows the definitions declared beside
        it; an error for a definition declared twice or with no job of its framework.
        Each definition is carried (emitted on the operator target) by the first job
        that uses it (else the first of its framework), so two jobs sharing one never
        emit it twice."""
        if not self.definitions:
            return tuple(self.jobs)
        seen: dict[tuple[str, str, str], DefinitionEntry] = {}
        unique: list[DefinitionEntry] = []
        for d in self.definitions:
            key = (d.resource.kind, d.resource.metadata.namespace or "", d.resource.name)
            if key in seen:
                name = d.resource.name
                self.findings.append(
                    d.finding(
                        DEFINITION_DUPLICATE, "metadata.name", name, name=name, first=seen[key].path
                    )
                )
                continue
            seen[key] = d
            unique.append(d)
        carriers: dict[int, list[Any]] = {}
        for d in unique:
            user = next(
                (
                    i
                    for i, entry in enumerate(self.jobs)
                    if entry.framework.name == d.framework.name
                    and _uses(entry.framework, entry.job, d.resource)
                ),
                None,
            )
            if user is None:
                # Declared for other jobs of the cluster: it travels with the first job
                # of its framework; with none, there is no unit to carry it.
                user = next(
                    (i for i, e in enumerate(self.jobs) if e.framework.name == d.framework.name),
                    None,
                )
            if user is None:
                job_kind = d.framework.kind.kind
                self.findings.append(
                    d.finding(DEFINITION_UNUSED, "kind", d.resource.kind, job_kind=job_kind)
                )
                continue
            carriers.setdefault(user, []).append(d.resource)
        carrier_of = {id(d): i for i, ds in carriers.items() for d in ds}
        jobs = []
        for i, entry in enumerate(self.jobs):
            mine = [d.resource for d in unique if d.framework.name == entry.framework.name]
            # Only a framework with definition kinds carries them (``Framework`` checks at
            # class creation), and only definitions of those kinds are ``mine``.
            if mine and isinstance(entry.framework, CarriesDefinitions):
                framework = entry.framework.with_definitions(mine, carriers.get(i, []))
                # Applied after the job whose unit carries a definition it uses.
                after = [
                    self.jobs[carrier_of[id(d)]].job
                    for d in mine
                    if carrier_of.get(id(d), i) != i and _uses(entry.framework, entry.job, d)
                ]
                keys = tuple(dict.fromkeys(f"{j.namespace}/{j.name}" for j in after))
                entry = replace(entry, framework=framework, after=keys)
            jobs.append(entry)
        return tuple(jobs)


Expect = Category | Literal["job"]
"""What a stack list holds: ``job`` for ``jobs``, a platform category otherwise."""

LIST_KEYS: dict[str, Expect] = {
    "jobs": "job",
    "backends": "backend",
    "nodePools": "nodePool",
    "queues": "queue",
    "operators": "operator",
}
"""Stack keys that hold lists of documents, and what each list holds."""
_KEY_OF: dict[Expect, str] = {expect: key for key, expect in LIST_KEYS.items()}


def _is_platform(body: Mapping[str, Any]) -> bool:
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version == API_VERSION:
        return True
    return api_version is None and isinstance(kind, str) and PLATFORM.by_kind(kind) is not None


ENTRY_TYPE = Rule(
    "spec.entry_type",
    "{what} must be a mapping with apiVersion, kind, metadata and spec, not {found}",
    hint="check the indentation of this entry",
)
WRONG_LIST = Rule(
    "spec.wrong_list",
    f"a {{kind}} belongs under {CONFIG_NAMESPACE}:{{key}}",
    hint=f"move this entry to {CONFIG_NAMESPACE}:{{key}}",
)


def parse_entry(
    doc: Any,
    *,
    path: str,
    source: str = "",
    base_dir: Path | None = None,
    expect: Expect | None = None,
    access: FileAccess | None = None,
) -> Parsed:
    """One list entry or document — a job, a platform resource, or ``{file: …}``.

    ``expect`` is what the list it sits in holds (None: anything, as in a plain file).
    ``access`` says where ``file:`` may point; default: the repository of ``base_dir``.
    """
    if not isinstance(doc, Mapping):
        what = "a job" if expect in (None, "job") else f"a {expect}"
        # The value is never quoted: it may be the first line of a file that is no job.
        return Parsed(
            findings=[ENTRY_TYPE.at(path, what=what, found=_kind_of_value(doc)).located(source)]
        )
    body = dict(doc)
    if "file" in body:
        return _parse_file_entry(
            body, path, source, base_dir, expect, access or FileAccess.below(base_dir or Path())
        )
    placeholders = _placeholder_findings(body, path, source)
    if placeholders:
        return Parsed(findings=placeholders)
    definer = REGISTRY.of_document(body, defining=True)
    if _is_platform(body):
        parsed = _parse_platform(body, path, source)
        got: Expect = parsed.platform[0].plugin.category if parsed.platform else "job"
    elif definer is not None:
        body.pop(OPTIONS_KEY, None)
        parsed = _parse_definition(body, definer, path, source)
        got = "job"
    else:
        jobs, findings = _parse_job_document(body, path, source)
        parsed = Parsed(jobs=jobs, findings=findings)
        got = "job"
    if (
        expect is not None
        and (parsed.jobs or parsed.platform or parsed.definitions)
        and got != expect
    ):
        parsed = Parsed(
            findings=[
                WRONG_LIST.at(
                    path, body.get("kind"), kind=body.get("kind"), key=_KEY_OF[got]
                ).located(source)
            ]
        )
    return parsed


def _uses(framework: Framework[Any], job: Any, definition: Any) -> bool:
    """Whether ``job`` refers to the declared ``definition`` (its framework's
    ``Definitions`` capability says)."""
    return framework.definitions is not None and framework.definitions.uses(job, definition)


def _parse_definition(
    body: dict[str, Any], framework: Framework[Any], path: str, source: str
) -> Parsed:
    definitions = framework.definitions
    if definitions is None:
        # The registry names a framework defining a kind only by its definition_kinds.
        raise ValueError(f"{framework.name} declares no definitions")
    model = definitions.model(str(body.get("kind")))
    try:
        resource = model.model_validate(body)
    except ValidationError as exc:
        return Parsed(findings=_located(findings_from_validation_error(exc, model), source, path))
    findings = _located(definitions.findings(resource), source, path)
    if any(f.severity is Severity.ERROR for f in findings):
        return Parsed(findings=findings)
    entry = DefinitionEntry(resource, framework, path, source)
    return Parsed(definitions=[entry], findings=findings)


def _kind_of_value(value: Any) -> str:
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return "an empty value" if value is None else "a value of another type"


_PLACEHOLDER_PREFIX = "<generated:"


PLACEHOLDER = Rule(
    "spec.placeholder",
    f"text starting {_PLACEHOLDER_PREFIX}…> is reserved for the values "
    "trainjobs generates (SSH keys, passwords)",
    hint="write your own value; to have one generated, use the option that "
    "asks for it (e.g. a RedisBackend's password: true)",
)


def _placeholder_findings(body: Mapping[str, Any], path: str, source: str) -> list[Finding]:
    """A finding for each string in a document that looks like a generated-value
    placeholder: the Pulumi components replace those with a generated secret, so one a
    user wrote would turn into a password where they expected their own text."""
    findings: list[Finding] = []
    pending: list[tuple[Any, str]] = [(body, path)]
    while pending:
        value, where = pending.pop()
        if isinstance(value, Mapping):
            for key, item in value.items():
                pending.append((item, f"{where}.{key}"))
        elif isinstance(value, list):
            pending += [(item, f"{where}[{i}]") for i, item in enumerate(value)]
        elif isinstance(value, str) and _PLACEHOLDER_PREFIX in value:
            findings.append(PLACEHOLDER.at(where).located(source))
    return sorted(findings, key=lambda f: f.path)


def parse_job(
    doc: Any,
    *,
    path: str,
    source: str = "",
    base_dir: Path | None = None,
) -> tuple[list[JobEntry], list[Finding]]:
    """One ``jobs`` entry (a job document or ``{file: …}``) → entries and findings."""
    parsed = parse_entry(doc, path=path, source=source, base_dir=base_dir, expect="job")
    return parsed.jobs, parsed.findings


def _parse_job_document(
    body: dict[str, Any], path: str, source: str
) -> tuple[list[JobEntry], list[Finding]]:
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
    framework = REGISTRY.of_document(body)
    if framework is None:
        findings.append(_unknown_kind(body.get("apiVersion"), body.get("kind"), path, source))
        return [], findings
    try:
        job = framework.model.model_validate(body)
    except ValidationError as exc:
        invalid = _located(findings_from_validation_error(exc, framework.model), source, path)
        # Attributed here, where the job's kind is known: no job is built to say it later.
        for finding in invalid:
            stage = loading_stage(framework, finding)
            findings.append(finding.staged(*stage) if stage else finding)
        return [], findings
    entry = JobEntry(job=job, framework=framework, options=options, path=path, source=source)
    return ([entry] if not findings else []), findings


def _parse_platform(body: dict[str, Any], path: str, source: str) -> Parsed:
    kind = body.get("kind")
    plugin = PLATFORM.by_kind(kind) if isinstance(kind, str) else None
    if plugin is None:
        return Parsed(findings=[_unknown_kind(body.get("apiVersion"), kind, path, source)])
    try:
        resource = plugin.model.model_validate(body)
    except ValidationError as exc:
        return Parsed(
            findings=_located(findings_from_validation_error(exc, plugin.model), source, path)
        )
    findings = _located(plugin.validate(resource), source, path)
    if any(f.severity is Severity.ERROR for f in findings):
        return Parsed(findings=findings)
    return Parsed(platform=[PlatformEntry(resource, plugin, path, source)], findings=findings)


def _unknown_kind(api_version: Any, kind: Any, path: str, source: str) -> Finding:
    platform = api_version == API_VERSION
    known = [f"{API_VERSION} {k}" for k in PLATFORM.kinds()] if platform else REGISTRY.kinds()
    everything = [
        *REGISTRY.kinds(),
        *REGISTRY.definition_kinds(),
        *(f"{API_VERSION} {k}" for k in PLATFORM.kinds()),
    ]
    if not api_version or not kind:
        missing = "apiVersion" if not api_version else "kind"
        served = [k.split()[0] for k in everything if k.split()[1] == kind]
        hint = (
            f"add apiVersion: {' or '.join(served)}"
            if missing == "apiVersion" and served
            else f"a document names its kind, one of: {', '.join(known)}"
        )
        return Finding(
            code="spec.kind_missing",
            path=f"{path}.{missing}",
            message="required field is missing",
            hint=hint,
            source=source,
        )
    if api_version == "v1" and kind == "List":
        # expand_lists unpacks a List whose items are a list; this one's are not.
        return Finding(
            code="spec.list_items",
            path=f"{path}.items",
            message="a List holds its objects as a list under items",
            hint="write items: as a list (- apiVersion: …), as kubectl get -o yaml prints it",
            source=source,
        )
    same_kind = [k for k in everything if k.split()[1] == kind]
    # A suggestion stays in the API group the document names: a TrainJob of
    # trainer.kubeflow.org is no misspelt TrainingJob of paddlepaddle.org.
    group = _group(str(api_version))
    in_group = [k for k in everything if _group(k.split()[0]) == group]
    near = [k for k in in_group if k.split()[1].lower() == str(kind).lower()]
    if not near:
        # A misspelling: the closest kind beats a list that grows with every plugin.
        by_kind = {k.split()[1]: k for k in in_group}
        close = difflib.get_close_matches(str(kind), list(by_kind), n=1, cutoff=0.8)
        near = [by_kind[close[0]]] if close else []
    if same_kind:
        # A kind may be served at several versions (MPIJob: v2beta1 and v1).
        versions = " or ".join(k.split()[0] for k in same_kind)
        hint = f"{kind} is served as {versions}; change apiVersion"
    elif near:
        hint = f"did you mean {near[0].split()[1]!r} ({near[0].split()[0]})?"
    else:
        hint = f"use one of: {', '.join(known)}"
    what = "platform kind" if platform else "framework"
    return Finding(
        code="spec.kind_unknown",
        path=f"{path}.kind",
        message=f"no {what} handles this apiVersion and kind",
        value=f"{api_version} {kind}",
        hint=hint,
        source=source,
    )


def _group(api_version: str) -> str:
    """The API group of ``apiVersion`` (``kubeflow.org/v1`` → ``kubeflow.org``; ``v1``,
    the core group, → ``""``)."""
    return api_version.rpartition("/")[0]


def _file_finding(code: str, path: str, message: str, hint: str, source: str) -> Finding:
    return Finding(code=code, path=f"{path}.file", message=message, hint=hint, source=source)


FILE_ENTRY_EXTRA = Rule(
    "spec.file_entry",
    "an entry with 'file' may carry {beside} beside it",
    hint="move these fields into the file it names",
)
FILE_TYPE = Rule(
    "spec.file_type",
    "file must be the path of a YAML file, on one line",
    hint="e.g. file: ../examples/tf-dist/tfjob.yaml",
)


def _parse_file_entry(
    body: dict[str, Any],
    path: str,
    source: str,
    base_dir: Path | None,
    expect: Expect | None,
    access: FileAccess,
) -> Parsed:
    parsed = Parsed()
    options = JobOptions()
    raw_options = body.get(OPTIONS_KEY)
    if raw_options is not None and expect in (None, "job"):
        try:
            options = JobOptions.model_validate(raw_options)
        except ValidationError as exc:
            parsed.findings += _located(
                findings_from_validation_error(exc, JobOptions), source, f"{path}.{OPTIONS_KEY}"
            )
    allowed = {"file", OPTIONS_KEY} if expect in (None, "job") else {"file"}
    extra = sorted(set(body) - allowed)
    if extra:
        beside = "only 'trainjobs' options" if OPTIONS_KEY in allowed else "nothing"
        parsed.findings.append(
            FILE_ENTRY_EXTRA.at(f"{path}.{extra[0]}", extra, beside=beside).located(source)
        )
    name = body["file"]
    if not isinstance(name, str) or not name.strip() or any(ord(c) < 32 for c in name):
        value = name if not isinstance(name, str) else NO_VALUE
        parsed.findings.append(FILE_TYPE.at(f"{path}.file", value).located(source))
        return parsed
    target = (base_dir or Path.cwd()) / name
    if not name.lower().endswith(YAML_SUFFIXES):
        # Never read it: its content would end up quoted in a finding.
        parsed.findings.append(
            _file_finding(
                "file.not_yaml",
                path,
                "file may name only a YAML file of jobs (.yaml or .yml)",
                "name the YAML file that holds the job",
                source,
            )
        )
        return parsed
    resolved = Path(os.path.realpath(target))
    if not access.allows(resolved):
        roots = " or ".join(str(r) for r in access.roots)
        parsed.findings.append(
            _file_finding(
                "file.outside",
                path,
                f"the file is outside {roots}, where file may point",
                f"copy the job into the repository, or allow its folder with "
                f"{FILE_ROOTS_ENV}=FOLDER",
                source,
            )
        )
        return parsed
    if resolved in access.chain:
        loop = " → ".join(p.name for p in (*access.chain[access.chain.index(resolved) :], resolved))
        parsed.findings.append(
            _file_finding(
                "file.cycle",
                path,
                f"the file is already being read: the entries go round in a circle ({loop})",
                "remove the entry that leads back to a file that names it",
                source,
            )
        )
        return parsed
    access.read += 1
    most = limits.FILES.value()
    if access.read > most:
        if access.read == most + 1:  # once, not for every entry after it
            parsed.findings.append(
                _file_finding(
                    "limit.files",
                    path,
                    f"the stack names more than {most:,} files; {limits.FILES.exceeded()}",
                    "check for files that name each other over and over; " + limits.FILES.hint(),
                    source,
                )
            )
        return parsed
    try:
        docs = read_documents(target)
    except SpecError as exc:
        parsed.findings += [f if f.path else f.located("", f"{path}.file") for f in exc.findings]
        return parsed
    first = docs[0] if len(docs) == 1 else None
    if isinstance(first, Mapping) and "config" in first and "apiVersion" not in first:
        # Read as a job, it would be "apiVersion: required field is missing".
        parsed.findings.append(
            _file_finding(
                "file.stack",
                path,
                "names a stack config (it holds config:); file takes a file of jobs",
                "name its job files here, or render the two stacks one by one",
                source,
            )
        )
        return parsed
    inner = FileAccess(access.roots, (*access.chain, resolved), access.read)
    explicit = options.model_dump(exclude_none=True)
    given = list(raw_options) if isinstance(raw_options, Mapping) and explicit else []
    for i, doc in enumerate(docs):
        stack_given: list[str] = []
        if isinstance(doc, Mapping) and explicit and not _is_platform(doc):
            # Options beside `file:` apply to every job in it; a job's own options win.
            own = doc.get(OPTIONS_KEY)
            own = own if isinstance(own, Mapping) else {}
            doc = {**doc, OPTIONS_KEY: {**explicit, **own}}
            stack_given = [str(key) for key in given if key not in own]
        sub_path = path if len(docs) == 1 else f"{path}[{i}]"
        found = parse_entry(
            doc,
            path=sub_path,
            source=str(target),
            base_dir=target.parent,
            expect=expect,
            access=inner,
        )
        if stack_given:
            # Findings about these options name this file, where they were written.
            found.jobs = [
                replace(
                    entry,
                    option_sources=(
                        *((k, s) for k, s in entry.option_sources if k not in stack_given),
                        *((key, source) for key in stack_given),
                    ),
                )
                for entry in found.jobs
            ]
        parsed.add(found)
        if inner.read > most:
            break
    access.read = inner.read
    return parsed


def read_documents(path: Path) -> list[Any]:
    """The YAML documents of a file; unreadable, binary, huge or malformed files → SpecError.

    Held to :mod:`trainjobs.limits`; a FIFO or device is refused unread. No finding
    quotes the file's content.
    """
    source = str(path).replace("\0", "\\0")

    def fail(message: str, hint: str) -> SpecError:
        return SpecError.from_findings(
            [Finding(code="input.file", path="", message=message, hint=hint, source=source)]
        )

    try:
        text = read_bounded(path)
    except InputError as exc:
        raise fail(exc.problem, exc.hint) from None
    try:
        docs = load_all(text, source)
    except YamlSyntaxError as exc:
        raise fail(exc.problem, exc.hint) from None
    expanded = expand_lists(docs)
    if not expanded:
        # A List of nothing is what `kubectl get tfjobs -o yaml` prints when there are none.
        empty = "holds only an empty List (items: [])" if docs else "holds no YAML documents"
        raise fail(empty, "add a job or a stack config")
    return expanded


def expand_lists(docs: Sequence[Any]) -> list[Any]:
    """Documents with each kubectl ``List`` replaced by its items, in order.

    ``kubectl get -o yaml`` of several objects prints one ``{apiVersion: v1,
    kind: List, items: [...]}``; to kubectl (and so to trainjobs) that is the
    same as the items as separate documents. Lists inside lists are unpacked too.
    """
    out: list[Any] = []
    pending = list(reversed(docs))
    while pending:
        doc = pending.pop()
        if _is_list(doc):
            pending.extend(reversed(doc["items"]))
        else:
            out.append(doc)
    return out


def _is_list(doc: Any) -> bool:
    return (
        isinstance(doc, Mapping)
        and doc.get("apiVersion") == "v1"
        and doc.get("kind") == "List"
        and isinstance(doc.get("items"), list)
    )


def parse_documents(
    docs: Sequence[Any],
    *,
    source: str = "",
    base_dir: Path | None = None,
    access: FileAccess | None = None,
) -> StackSpec:
    """A file's documents (jobs and platform resources) → a stack of them.

    Paths count per list, as in a stack: the second job is ``jobs[1]`` whatever
    documents come before it. ``access``: where ``file:`` may point (default: the
    repository of ``base_dir``). SpecError lists every problem.
    """
    access = access or FileAccess.below(base_dir or Path.cwd())
    parsed = Parsed()
    counts: dict[str, int] = {}
    for doc in docs:
        key = "jobs"
        if isinstance(doc, Mapping) and "file" not in doc and _is_platform(doc):
            plugin = PLATFORM.by_kind(str(doc.get("kind")))
            key = _KEY_OF[plugin.category] if plugin is not None else "jobs"
        index = counts.get(key, 0)
        counts[key] = index + 1
        parsed.add(
            parse_entry(
                doc, path=f"{key}[{index}]", source=source, base_dir=base_dir, access=access
            )
        )
        if _too_many_errors(parsed, source):
            break
    jobs = parsed.bound()
    _raise_if_errors(parsed.findings)
    return StackSpec(jobs=jobs, platform=tuple(parsed.platform), source=source)


def _names_list(
    values: Mapping[str, Any],
    key: str,
    what: str,
    hint: str,
    findings: list[Finding],
    source: str,
) -> list[str]:
    """The config list ``key`` of texts (``what`` they are), default empty; a finding in
    ``findings`` and empty when it is not a list of texts."""
    found = values.get(key, [])
    if isinstance(found, list) and all(isinstance(item, str) for item in found):
        return found
    findings.append(_config_finding(key, f"{key} must be a list of {what}", found, hint, source))
    return []


def _config_finding(key: str, message: str, value: Any, hint: str, source: str) -> Finding:
    return Finding(
        code=f"stack.{key}",
        path=f"{CONFIG_NAMESPACE}:{key}",
        message=message,
        value=value,
        hint=hint,
        source=source,
    )


def _namespace_typo(namespace: str) -> bool:
    """Whether a config namespace is ``trainjobs`` misspelt (``trainjob``, ``TrainJobs``)."""
    if namespace.lower() == CONFIG_NAMESPACE:
        return True
    return bool(difflib.get_close_matches(namespace.lower(), [CONFIG_NAMESPACE], cutoff=0.8))


NAMESPACE_TYPO = Rule(
    "stack.namespace_typo",
    "{namespace}: is not trainjobs' config namespace",
    hint=f"did you mean {CONFIG_NAMESPACE}:{{bare}}?",
)


def parse_stack(
    config: Mapping[str, Any],
    *,
    source: str = "",
    base_dir: Path | None = None,
    access: FileAccess | None = None,
) -> StackSpec:
    """A stack's config (``trainjobs:``-prefixed keys, or the bare keys) → StackSpec.

    ``access``: where ``file:`` may point (default: the repository of ``base_dir``).
    """
    access = access or FileAccess.below(base_dir or Path.cwd())
    values: dict[str, Any] = {}
    findings: list[Finding] = []
    for key, value in config.items():
        namespace, sep, bare = str(key).rpartition(":")
        if sep and namespace != CONFIG_NAMESPACE:
            if _namespace_typo(namespace):
                # A typo here would silently render an empty stack and exit 0.
                findings.append(
                    NAMESPACE_TYPO.at(str(key), namespace=namespace, bare=bare).located(source)
                )
            continue  # another provider's or program's config, e.g. kubernetes:context
        values[bare] = value
    for key in sorted(set(values) - STACK_KEYS):
        close = difflib.get_close_matches(key, sorted(STACK_KEYS), n=1, cutoff=0.75)
        findings.append(
            Finding(
                code="stack.unknown_key",
                path=f"{CONFIG_NAMESPACE}:{key}",
                message="unknown stack setting",
                hint=f"did you mean {CONFIG_NAMESPACE}:{close[0]}?"
                if close
                else "use one of "
                + ", ".join(f"{CONFIG_NAMESPACE}:{k}" for k in sorted(STACK_KEYS)),
                source=source,
            )
        )
    allow = values.get(ALLOW_NO_JOBS, False)
    if str(allow).lower() not in ("true", "false"):
        # Pulumi hands the program every setting as text, so "true" is as good as true.
        hint = f"pulumi config set {CONFIG_NAMESPACE}:{ALLOW_NO_JOBS} true"
        message = f"{ALLOW_NO_JOBS} must be true or false"
        findings.append(_config_finding(ALLOW_NO_JOBS, message, allow, hint, source))
    target: Target = DEFAULT_TARGET
    raw_target = values.get("target", DEFAULT_TARGET)
    if is_target(raw_target):
        target = raw_target
    else:
        hint = f"use one of {', '.join(TARGETS)}"
        findings.append(_config_finding("target", "unknown target", raw_target, hint, source))
    k8s_version = values.get("k8sVersion", DEFAULT_K8S_VERSION)
    if not isinstance(k8s_version, str):
        findings.append(
            _config_finding(
                "k8sVersion",
                'k8sVersion must be a quoted version like "1.32"',
                k8s_version,
                'quote it: k8sVersion: "1.32" (1.30 unquoted is the number 1.3)',
                source,
            )
        )
        k8s_version = DEFAULT_K8S_VERSION
    namespaces = _names_list(
        values, "namespaces", "names", "e.g. namespaces: [training]", findings, source
    )
    shared = _names_list(
        values,
        "sharedNamespaces",
        "names",
        "e.g. sharedNamespaces: [kubeflow]",
        findings,
        source,
    )
    for name in sorted(set(shared) & set(namespaces)):
        findings.append(
            _config_finding(
                "sharedNamespaces",
                f"namespace {name!r} is both created and owned by the stack (namespaces) and "
                "shared with others (sharedNamespaces)",
                name,
                "keep it in one list: namespaces if the stack creates it and destroy may delete "
                "it, sharedNamespaces if it exists already and must outlive the stack",
                source,
            )
        )
    adopt, adopt_findings = parse_adopt(values.get(ADOPT_KEY), CONFIG_NAMESPACE, source)
    findings += adopt_findings
    profile: Profile = DEFAULT_PROFILE
    raw_profile = values.get("podSecurity", DEFAULT_PROFILE)
    if raw_profile in PROFILES:
        profile = cast(Profile, raw_profile)
    else:
        findings.append(
            _config_finding(
                "podSecurity",
                "unknown Pod Security Standards level",
                raw_profile,
                f"use one of {', '.join(PROFILES)}",
                source,
            )
        )
    ignore = _names_list(
        values,
        "ignore",
        "check rule codes",
        "e.g. ignore: [image.unpinned]; `trainjobs check --list-rules` lists the codes",
        findings,
        source,
    )
    parsed = Parsed(findings=findings)
    stopped = False
    for key, expect in LIST_KEYS.items():
        if stopped:
            break
        entries = values.get(key, [])
        if not isinstance(entries, list):
            parsed.findings.append(
                _config_finding(
                    key, f"{key} must be a list", entries, "start each entry with '- '", source
                )
            )
            continue
        for i, doc in enumerate(entries):
            found = parse_entry(
                doc,
                path=f"{key}[{i}]",
                source=source,
                base_dir=base_dir,
                expect=expect,
                access=access,
            )
            parsed.add(found)
            stopped = _too_many_errors(parsed, source)
            if stopped:
                break
    jobs = parsed.bound()
    _raise_if_errors(parsed.findings)
    return StackSpec(
        jobs=jobs,
        platform=tuple(parsed.platform),
        target=target,
        k8s_version=k8s_version,
        namespaces=tuple(namespaces),
        shared_namespaces=tuple(shared),
        adopt=adopt,
        source=source,
        pod_security=profile,
        ignore=tuple(ignore),
    )


def _raise_if_errors(findings: Sequence[Finding]) -> None:
    if any(f.severity.value == "error" for f in findings):
        raise SpecError.from_findings(findings)


def load_path(path: str | Path, root: Path | None = None) -> StackSpec:
    """Load a stack config file or a job file (detected by its content).

    ``file:`` entries may point inside ``root`` (default: the repository of the file,
    see :func:`repository_root`) and the folders of ``TRAINJOBS_FILE_ROOTS``.
    """
    file = Path(path)
    docs = read_documents(file)
    access = FileAccess.below(root if root is not None else file.parent)
    access.chain = (Path(os.path.realpath(file)),)
    first = docs[0]
    is_stack = (
        len(docs) == 1
        and isinstance(first, Mapping)
        and "config" in first
        and "apiVersion" not in first
    )
    if isinstance(first, Mapping) and "runtime" in first and "apiVersion" not in first:
        # Its config: declares the settings' types, which read as settings would make
        # a finding of every one of them.
        raise SpecError.from_findings(
            [
                Finding(
                    code="stack.project_file",
                    path="runtime",
                    message="this is a Pulumi project file (Pulumi.yaml), not a stack config",
                    hint="name the stack's settings file, e.g. stacks/Pulumi.demo.yaml "
                    "(Pulumi.<stack>.yaml beside Pulumi.yaml, or in its stackConfigDir)",
                    source=str(file),
                )
            ]
        )
    settings = [
        str(key)
        for key in (first if isinstance(first, Mapping) and "apiVersion" not in first else {})
        if str(key).count(":") == 1 and _namespace_typo(str(key).partition(":")[0])
    ]
    if settings and "config" not in first:
        # Read as a job, it would be "apiVersion: required field is missing".
        raise SpecError.from_findings(
            [
                Finding(
                    code="stack.config",
                    path=settings[0],
                    message="stack settings belong under config:, which the file lacks",
                    hint="add a line config: above them and indent them by two spaces, "
                    "as in stacks/Pulumi.demo.yaml",
                    source=str(file),
                )
            ]
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
        return parse_stack(config, source=str(file), base_dir=file.parent, access=access)
    return parse_documents(docs, source=str(file), base_dir=file.parent, access=access)
