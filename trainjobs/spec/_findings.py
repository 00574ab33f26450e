"""Turn pydantic validation errors into findings a person can act on."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from trainjobs.errors import NO_VALUE, Finding, format_path

__all__ = ["findings_from_validation_error", "known_fields"]

# Names pydantic puts into an error location for the member of a union it tried.
_UNION_TAG = re.compile(r"^(int|str|float|bool|none)$|\[")


def known_fields(model: type[BaseModel]) -> set[str]:
    """Every wire name in ``model`` and the models below it, for "did you mean" hints."""
    seen: set[type[BaseModel]] = set()
    names: set[str] = set()

    def walk(current: type[BaseModel]) -> None:
        if current in seen:
            return
        seen.add(current)
        for name, info in current.model_fields.items():
            names.add(info.alias or name)
            for sub in _models_in(info.annotation):
                walk(sub)

    walk(model)
    return names


def field_homes(model: type[BaseModel]) -> dict[str, str]:
    """Each wire name in ``model`` → the first dotted path where it is a field.

    Lets an unknown field that exists elsewhere point at its real place (a v1 job's
    ``spec.cleanPodPolicy`` belongs under ``spec.runPolicy``). Map-valued fields
    (replica specs) are not walked: their keys are the user's.
    """
    homes: dict[str, str] = {}
    pending: list[tuple[type[BaseModel], str]] = [(model, "")]
    seen: set[type[BaseModel]] = set()
    while pending:
        current, prefix = pending.pop(0)
        if current in seen:
            continue
        seen.add(current)
        for name, info in current.model_fields.items():
            wire = info.alias or name
            path = f"{prefix}{wire}"
            homes.setdefault(wire, path)
            if getattr(info.annotation, "__origin__", None) is dict:
                continue
            pending += [(sub, f"{path}.") for sub in _models_in(info.annotation)]
    return homes


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in getattr(annotation, "__args__", ()) or ():
        yield from _models_in(arg)


def _hint(error: dict[str, Any], names: set[str], homes: dict[str, str]) -> str:
    kind = error["type"]
    if kind == "union_type":
        hints = (_hint({**m, "loc": error["loc"]}, names, homes) for m in error["members"])
        return "; or ".join(dict.fromkeys(h for h in hints if h))
    loc = error["loc"]
    last = loc[-1] if loc else ""
    if kind == "missing" and last == "template" and len(loc) > 1:
        # The operator creates each replica's pods from this PodTemplateSpec.
        return (
            "add template: {spec: {containers: [{name: …, image: …}]}} — the pod "
            "template every replica of this type runs"
        )
    if kind == "missing":
        return f"add the required field {last!r}"
    home = homes.get(str(last))
    if kind == "extra_forbidden" and home and home.startswith("spec.") and home != format_path(loc):
        return f"move it to {home}; it is not a field here"
    if kind == "extra_forbidden":
        close = difflib.get_close_matches(str(last), sorted(names), n=1, cutoff=0.75)
        if close:
            return f"did you mean {close[0]!r}?"
        return "remove it; it is not part of this object's API"
    if kind.startswith("literal") or kind == "enum":
        return "use one of the values listed"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "write a whole number without quotes, e.g. 2"
    if kind in ("string_type",):
        return 'quote the value so it is a string, e.g. "1"'
    if kind in ("bool_type", "bool_parsing"):
        return "write true or false without quotes"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return "write a mapping (key: value pairs) here"
    if kind == "list_type":
        return "write a list (lines starting with '- ') here"
    if kind.startswith("greater_than") or kind.startswith("less_than"):
        return "change the number to fit the bound"

    return ""


def _union_site(loc: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The location of the union a pydantic error location went through (the parts
    before the first member tag, ``str`` or ``dict[str,str]``), or None for no union."""
    for index, part in enumerate(loc):
        if isinstance(part, str) and _UNION_TAG.search(part):
            return loc[:index]
    return None


def _one_per_union(errors: list[Any]) -> list[Any]:
    """pydantic's errors with those of one union (``nodePool: str | {role: pool}``) made
    one: each member says what it expected, which reads as two contradicting errors.
    A member the value matched in shape (errors below the union's place) speaks alone;
    otherwise the members' expectations are joined into one error."""
    sites: dict[tuple[Any, ...], list[Any]] = {}
    for error in errors:
        site = _union_site(tuple(error["loc"]))
        if site is not None:
            sites.setdefault(site, []).append(error)
    out: list[Any] = []
    done: set[tuple[Any, ...]] = set()
    for error in errors:
        site = _union_site(tuple(error["loc"]))
        if site is None:
            out.append(error)
            continue
        if site in done:
            continue
        done.add(site)
        members = sites[site]
        # A member tag is followed by the member's own path: deeper means the shape fit.
        deeper = [e for e in members if len(e["loc"]) > len(site) + 1]
        if deeper:
            out += deeper
            continue
        expected = [str(e["msg"]).removeprefix("Input should be ") for e in members]
        if len(members) == 1 or any(e["type"] not in _TYPE_ERRORS for e in members):
            out += members
            continue
        joined = f"Input should be {' or '.join(expected)}"
        out.append({**members[0], "msg": joined, "type": "union_type", "members": members})
    return out


# A member of a union refused the value for its type only (not for its content).
_TYPE_ERRORS = {
    "string_type",
    "int_type",
    "int_parsing",
    "float_type",
    "float_parsing",
    "bool_type",
    "bool_parsing",
    "dict_type",
    "list_type",
    "model_type",
    "model_attributes_type",
}


_OWN_FIX = "; fix: "
"""In a validator's ValueError text, what comes before the fix, as a finding prints it."""


def findings_from_validation_error(
    exc: ValidationError, model: type[BaseModel], code: str = "spec"
) -> list[Finding]:
    """One finding per distinct problem; paths relative to the validated document."""
    names = known_fields(model)
    homes = field_homes(model)
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for details in _one_per_union(exc.errors(include_url=False)):
        loc = [
            part
            for part in details["loc"]
            if not (isinstance(part, str) and _UNION_TAG.search(part))
        ]
        error: dict[str, Any] = {**details, "loc": tuple(loc)}
        path = format_path(loc)
        message = str(error["msg"])
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        elif error["type"] == "missing":
            message = "required field is missing"
        elif error["type"] == "value_error":
            # Our own validators' words, without pydantic's "Value error, " before them;
            # they put the fix after "; fix: ", as a finding shows it.
            message = message.removeprefix("Value error, ")
        key = (path, error["type"] if error["type"] != "int_type" else "type")
        if key in seen:
            continue
        seen.add(key)
        value = NO_VALUE if error["type"] == "missing" else error.get("input", NO_VALUE)
        message, _, own_fix = message.partition(_OWN_FIX)
        findings.append(
            Finding(
                code=f"{code}.{error['type']}",
                path=path,
                message=message[0].lower() + message[1:] if message else message,
                value=value,
                hint=own_fix or _hint(error, names, homes),
            )
        )
    return findings
