"""The README and docs/ cannot drift: every sample in them is run and compared.

The convention (docs/development.md, "Samples in the docs"):

* A fenced ```` ```console ```` block is **run**: each ``$ COMMAND`` line is run by bash
  in a copy of the repository's stacks and examples (one copy per page, commands in page
  order), and the lines after it, up to the next ``$``, are its output (stdout and stderr
  as a terminal shows them, colour off), compared line by line. A line ``...`` stands for
  any number of lines. The command must exit 0, unless its line ends with a comment
  ``# exit N``. Only offline commands may stand there (see ``_OFFLINE``).
* A fenced ```` ```sh ```` block is **not run** (it needs a cluster, Pulumi, a build or
  minutes): every such command is listed in this test's snapshot, so a reviewer sees
  which samples are not checked.
* A fenced ```` ```python ```` block is executed, on its own, under Pulumi's mocks.
* A ```` ```yaml ```` block must parse.
* Every other block names its language (``text``, ``json``, ``mermaid``); an indented
  (unfenced) code block is refused: it would hide a command from this test.

"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from markdown_it import MarkdownIt
from syrupy.assertion import SnapshotAssertion

from tests.support.paths import ROOT
from tests.support.pulumi_harness import run_program

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
_NOT_CONVERTED: set[str] = set()
"""Pages exempt from the block conventions while someone rewrites them (none now)."""

_README_MAX_LINES = 400

# The trainjobs commands a console block may run: offline, seconds each.
_OFFLINE = {
    "render",
    "check",
    "diff",
    "preview",
    "graph",
    "convert",
    "frameworks",
    "crds",
    "edl-scale",
}
# Plain commands a console block may use to set a scene (change a file, show it).
_HELPERS = {"sed", "cp", "cat", "mkdir", "echo", "head", "grep", "ls"}
# What a page's commands work on: copied per page, so a sample may change files.
_COPIED = ("stacks", "examples", "Pulumi.yaml", "schema")
_TIMEOUT_S = 120
_EXIT = re.compile(r"#.*\bexit (\d+)\s*$")
_MD = MarkdownIt("commonmark")


def _rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@dataclass(frozen=True)
class Block:
    """One code block of a page: its language (``""`` when indented), text, first line."""

    page: str
    info: str
    text: str
    line: int

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    tokens = _MD.parse(page.read_text(encoding="utf-8"))
    blocks = []
    for token in tokens:
        if token.type in ("fence", "code_block"):
            assert token.map is not None
            info = token.info.split()[0] if token.type == "fence" and token.info else ""
            lang = info if token.type == "fence" else "(indented)"
            blocks.append(Block(_rel(page), lang, token.content, token.map[0] + 1))
    return blocks


def _all(lang: str) -> list[Block]:
    return [b for page in PAGES for b in _blocks(page) if b.info == lang]


# --- console blocks: run and compare -------------------------------------------------


@dataclass(frozen=True)
class Command:
    line: str
    expected: list[str]
    exit_code: int


def _commands(block: Block) -> list[Command]:
    commands: list[Command] = []
    lines = block.text.splitlines()
    assert lines and lines[0].startswith("$ "), f"{block.id}: a console block starts with `$ `"
    for line in lines:
        if line.startswith("$ "):
            match = _EXIT.search(line)
            commands.append(Command(line[2:], [], int(match.group(1)) if match else 0))
        else:
            commands[-1].expected.append(line.rstrip())
    return commands


_SEPARATORS = {"|", "||", "&&", ";", "&"}


def _programs(command: str) -> Iterator[list[str]]:
    """The words of each simple command of a line (quotes, comments and ``|``, ``&&``,
    ``;`` as bash reads them)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    for token in lexer:
        if token in _SEPARATORS:
            yield words
            words = []
        else:
            words.append(token)
    yield words


def _refuse_online(block: Block, command: str) -> None:
    """A console block holds only offline commands; the rest belong in a ``sh`` block."""
    for words in _programs(command):
        if not words:
            continue
        if words[0] == "trainjobs":
            sub = words[1] if len(words) > 1 else ""
            assert sub in _OFFLINE or sub.startswith("-"), (
                f"{block.id}: `{command}` is not an offline command; put it in a ```sh block"
            )
            assert "--live" not in words, f"{block.id}: `--live` reads a cluster; use ```sh"
        else:
            assert words[0] in _HELPERS, f"{block.id}: `{words[0]}` may not run in a console block"


def _matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line; a ``...`` line matches any number of lines."""
    chunks: list[list[str]] = [[]]
    for line in expected:
        if line == "...":
            chunks.append([])
        else:
            chunks[-1].append(line)
    if len(chunks) == 1:
        return actual == expected
    first, *middle, last = chunks
    if actual[: len(first)] != first or len(actual) < len(first) + len(last):
        return False
    if last and actual[len(actual) - len(last) :] != last:
        return False
    position, end = len(first), len(actual) - len(last)
    for chunk in middle:
        while position + len(chunk) <= end and actual[position : position + len(chunk)] != chunk:
            position += 1
        if position + len(chunk) > end:
            return False
        position += len(chunk)
    return True


def _copy(destination: Path) -> Path:
    for name in _COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=shutil.ignore_patterns(".*"))
        else:
            shutil.copy2(source, destination / name)
    # Its own git work tree, so `preview` keeps its state in the copy (at the top of the
    # work tree) wherever the temporary folder is.
    subprocess.run(["git", "init", "-q", str(destination)], check=True, timeout=_TIMEOUT_S)
    return destination


def _environment(home: Path) -> dict[str, str]:
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "PYTHONUNBUFFERED": "1",
        "TERM": "dumb",
        "COLUMNS": "120",
    }
    # The parsed-schema cache may be shared: it is keyed by version and source.
    cache = os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))
    env["XDG_CACHE_HOME"] = cache
    return env


def _console_pages() -> list[str]:
    return sorted({b.page for b in _all("console")})


@pytest.mark.parametrize("page", _console_pages())
def test_console_samples_print_what_the_page_shows(page: str, tmp_path: Path) -> None:
    work = _copy(tmp_path / "repo")
    env = _environment(tmp_path / "home")
    (tmp_path / "home").mkdir()
    failures = []
    for block in (b for b in _all("console") if b.page == page):
        for command in _commands(block):
            _refuse_online(block, command.line)
            result = subprocess.run(
                ["bash", "-c", command.line],
                cwd=work,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=_TIMEOUT_S,
            )
            actual = [line.rstrip() for line in result.stdout.replace(str(work), ".").splitlines()]
            if result.returncode != command.exit_code or not _matches(command.expected, actual):
                failures.append(
                    f"{block.id}: $ {command.line}\n  exit {result.returncode} "
                    f"(the page says {command.exit_code}); printed:\n"
                    + "\n".join(f"    {line}" for line in actual)
                    + "\n  the page shows:\n"
                    + "\n".join(f"    {line}" for line in command.expected)
                )
    assert not failures, "\n\n".join(failures)


# --- sh blocks: listed, not run --------------------------------------------------------


def test_commands_not_run_are_listed(snapshot: SnapshotAssertion) -> None:
    """Every command the tests do not run (a ```sh block), page by page. A change here is
    a sample added to or taken from the unchecked ones: review it as such."""
    listed: list[str] = []
    for block in _all("sh"):
        if block.page in _NOT_CONVERTED:
            continue
        for line in block.text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                listed.append(f"{block.page}: {line.strip()}")
    assert listed == snapshot


# --- python and yaml blocks --------------------------------------------------------------

# The config the snippets read with pulumi.Config() (`pulumi config set …` in a stack).
_CONFIG = {"trainjobs:image": "registry.local/bert:1.0", "trainjobs:redisPassword": "s3cret"}


@pytest.mark.parametrize("block", _all("python"), ids=lambda b: b.id)
def test_python_snippets_run(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the snippets' paths are relative to the repository
    scope: dict[str, Any] = {"__name__": "__main__"}
    run_program(
        lambda: exec(compile(block.text, block.id, "exec"), scope),
        _CONFIG,
        secret_keys=["trainjobs:redisPassword"],
        live={"kubernetes:core/v1:Pod": {"status": {"phase": "Running"}}},
    )


@pytest.mark.parametrize("block", _all("yaml"), ids=lambda b: b.id)
def test_yaml_samples_parse(block: Block) -> None:
    documents = list(yaml.safe_load_all(block.text))  # parses every document, or raises
    assert documents, f"{block.id}: an empty yaml block"


# --- the shape of the pages ----------------------------------------------------------


def _converted() -> Iterator[Block]:
    for page in PAGES:
        if _rel(page) not in _NOT_CONVERTED:
            yield from _blocks(page)


def test_every_block_says_what_it_is() -> None:
    known = {"console", "sh", "python", "yaml", "text", "json", "mermaid"}
    unnamed = [
        f"{b.id} ({b.info or 'no language'})"
        for b in _converted()
        if b.info not in known and b.info != "(indented)"
    ]
    assert unnamed == [], "name each block's language: " + ", ".join(sorted(known))


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= _README_MAX_LINES, f"README.md has {lines} lines; move detail to docs/"


def _headings(page: Path) -> list[str]:
    tokens = _MD.parse(page.read_text(encoding="utf-8"))
    return [
        tokens[i + 1].content
        for i, token in enumerate(tokens)
        if token.type == "heading_open" and tokens[i + 1].type == "inline"
    ]


def test_one_safety_page() -> None:
    """Two "Safety" sections once made the README's #safety link land on the wrong one."""
    safety = [f"{_rel(p)}: {h}" for p in PAGES for h in _headings(p) if h.strip() == "Safety"]
    assert safety == ["docs/safety.md: Safety"]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in _headings(page):
        slug = _slug(heading.replace("`", ""))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(page: Path) -> Iterator[str]:
    for token in _MD.parse(page.read_text(encoding="utf-8")):
        for child in token.children or []:
            href = child.attrGet("href") if child.type == "link_open" else None
            src = child.attrGet("src") if child.type == "image" else None
            for target in (href, src):
                if isinstance(target, str):
                    yield target


def _target(page: Path, link: str) -> tuple[Path, str]:
    path, _, anchor = link.partition("#")
    return ((page.parent / path).resolve() if path else page), anchor


def test_links_and_anchors_resolve() -> None:
    broken = []
    for page in PAGES:
        for link in _links(page):
            if re.match(r"[a-z]+:", link):
                continue  # a web address: not fetched
            target, anchor = _target(page, link)
            if not target.exists():
                broken.append(f"{_rel(page)}: {link} (no such file)")
            elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
                broken.append(f"{_rel(page)}: {link} (no such heading)")
    assert broken == []


def test_no_indented_code_blocks() -> None:
    """An indented block has no language, so it cannot be marked as run or not run."""
    indented = [b.id for b in _converted() if b.info == "(indented)"]
    assert indented == [], "fence these blocks (```console, ```sh, ```yaml …)"
