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


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for arg in getattr(annotation, "__args__", ()) or ():
        yield from _models_in(arg)


def _hint(error: dict[str, Any], names: set[str]) -> str:
    kind = error["type"]
    loc = error["loc"]
    last = loc[-1] if loc else ""
    if kind == "missing":
        return f"add the required field {last!r}"
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


def findings_from_validation_error(
    exc: ValidationError, model: type[BaseModel], code: str = "spec"
) -> list[Finding]:
    """One finding per distinct problem; paths relative to the validated document."""
    names = known_fields(model)
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for details in exc.errors(include_url=False):
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
        key = (path, error["type"] if error["type"] != "int_type" else "type")
        if key in seen:
            continue
        seen.add(key)
        value = NO_VALUE if error["type"] == "missing" else error.get("input", NO_VALUE)
        findings.append(
            Finding(
                code=f"{code}.{error['type']}",
                path=path,
                message=message[0].lower() + message[1:] if message else message,
                value=value,
                hint=_hint(error, names),
            )
        )
    return findings
