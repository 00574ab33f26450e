"""``pulumi.Input`` values inside jobs and platform specs.

The renderer and the checks work on plain data, but a Pulumi user passes values
that are not known yet: an image a registry push outputs, a namespace another
component created, a cluster name from a cloud resource, a password from a
secret manager. Each such value is swapped for a placeholder token before
rendering; the rendering (names, ports, env, dependencies) is the same for any
value, so the resources and their URNs are known at preview. When the objects
are registered, every string holding a token becomes an ``Output`` of the real
value (secret if the input was). Once the values resolve, the component renders
and checks the job again with them (:meth:`Inputs.resolved`).

A token is ``input-<8 hex>-<n>``: a valid DNS label, label value and image
name, so it passes the checks a real value of that field would. Only strings can
be Inputs; a number or a flag must be known when the program runs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pulumi

from trainjobs.errors import Finding
from trainjobs.k8s.names import suggest_name

__all__ = ["Inputs", "Resolved", "hide_forms", "is_input_token", "is_output", "value_forms"]

_TOKEN = re.compile(r"input-[0-9a-f]{8}-\d+")


def is_output(value: Any) -> bool:
    """Whether ``value`` is a value Pulumi resolves later (an ``Output`` or awaitable)."""
    return isinstance(value, pulumi.Output) or hasattr(value, "__await__")


def _as_output(awaitable: Awaitable[bool]) -> pulumi.Output[bool]:
    return pulumi.Output.from_input(awaitable)


def is_input_token(value: Any) -> bool:
    """Whether ``value`` is exactly one placeholder token."""
    return isinstance(value, str) and _TOKEN.fullmatch(value) is not None


class Inputs:
    """The Inputs of one component: token → ``Output``.

    ``scope`` (the component's type and name) keeps the tokens of two components
    apart, so a job may carry the tokens of the backend it was given.
    """

    def __init__(self, scope: str) -> None:
        self._digest = hashlib.sha256(scope.encode()).hexdigest()[:8]
        self._outputs: dict[str, pulumi.Output[Any]] = {}
        # What each token was made from: the same Output given twice (a namespace to a
        # backend and to its job) is one token, so the checks see one namespace.
        self._sources: dict[str, Any] = {}

    def __bool__(self) -> bool:
        return bool(self._outputs)

    @property
    def tokens(self) -> frozenset[str]:
        """Every placeholder token: the values not known until the Inputs resolve."""
        return frozenset(self._outputs)

    def merge(self, *others: Inputs) -> Inputs:
        """These Inputs with those of ``others`` (the components a job uses)."""
        for other in others:
            self._outputs.update(other._outputs)
            self._sources.update(other._sources)
        return self

    def token(self, value: Any) -> str:
        """The token standing for ``value`` (an ``Output`` or awaitable of a string)."""
        for token, source in self._sources.items():
            if source is value:
                return token
        token = f"input-{self._digest}-{len(self._outputs)}"
        self._outputs[token] = pulumi.Output.from_input(value)
        self._sources[token] = value
        return token

    def lift(self, value: Any) -> Any:
        """``value`` as plain data: every Output inside it replaced by a token."""
        if is_output(value):
            return self.token(value)
        if isinstance(value, Mapping):
            return {k: self.lift(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.lift(v) for v in value]
        return value

    def substitute(self, value: Any) -> Any:
        """``value`` with every string holding a token made an ``Output`` of the real text."""
        if isinstance(value, Mapping):
            return {k: self.substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if not isinstance(value, str):
            return value
        found = [t for t in _TOKEN.findall(value) if t in self._outputs]
        if not found:
            return value
        if len(found) == 1 and value == found[0]:
            return self._outputs[found[0]]
        outputs = [self._outputs[t] for t in found]

        def fill(values: list[Any]) -> str:
            text = value
            for token, resolved in zip(found, values, strict=True):
                text = text.replace(token, str(resolved))
            return text

        return pulumi.Output.all(*outputs).apply(fill)

    def holds(self, value: Any) -> bool:
        """Whether any string inside ``value`` holds one of these tokens."""
        if isinstance(value, Mapping):
            return any(self.holds(v) for v in value.values())
        if isinstance(value, list):
            return any(self.holds(v) for v in value)
        return isinstance(value, str) and any(t in self._outputs for t in _TOKEN.findall(value))

    def resolved(self) -> pulumi.Output[Resolved]:
        """Every token's value once all are known (not during a preview with unknowns),
        and which of them are secrets."""
        tokens = sorted(self._outputs)
        outputs = [self._outputs[t] for t in tokens]
        # Whether each is a secret, as a value: inside apply every value is plain text.
        secret: list[pulumi.Output[bool]] = [_as_output(o.is_secret()) for o in outputs]

        def resolve(values: list[Any]) -> Resolved:
            count = len(tokens)
            hidden = frozenset(t for t, s in zip(tokens, values[count:], strict=True) if s)
            return Resolved(dict(zip(tokens, values[:count], strict=True)), hidden, tokens)

        return pulumi.Output.all(*outputs, *secret).apply(resolve)

    def describe(self, text: str) -> str:
        """``text`` (an error message) with each token shown as the Input it stands for.

        Two different Output objects are two Inputs even when they will resolve to the
        same value (``ns.metadata.name`` read twice). Where a job and its backend or
        queue must agree (a namespace) and one of them is not known yet, the check
        waits for the values (``StackSpec.unresolved``).
        """
        names = {t: f"<Pulumi Input #{i}>" for i, t in enumerate(sorted(self._outputs), 1)}
        return _TOKEN.sub(lambda m: names.get(m.group(0), "<Pulumi Input>"), text)

    @staticmethod
    def fill(value: Any, values: Mapping[str, Any]) -> Any:
        """``value`` with each token replaced by its resolved text (plain data again)."""
        if isinstance(value, Mapping):
            return {k: Inputs.fill(v, values) for k, v in value.items()}
        if isinstance(value, list):
            return [Inputs.fill(v, values) for v in value]
        if isinstance(value, str):
            return _TOKEN.sub(lambda m: str(values.get(m.group(0), m.group(0))), value)
        return value


@dataclass(frozen=True)
class Resolved:
    """The values of a component's Inputs once known: token → value, and the tokens whose
    Input is a secret (``pulumi.Output.secret``, ``config.require_secret``)."""

    values: Mapping[str, Any]
    secrets: frozenset[str]
    tokens: list[str]
    """Every token, sorted: ``Inputs.describe`` numbers them in this order."""

    def redact(self, findings: Iterable[Finding]) -> list[Finding]:
        """``findings`` with every secret's value shown as ``<secret Pulumi Input #n>``.

        A check of the resolved values repeats a bad value in its finding (``got …``),
        lowercased or made into a valid name (``e.g. …``), or inside a name made from
        it (``Pod <namespace>/<name>``): each of those forms is replaced, the longest
        first, so a secret never reaches an error message or Pulumi's log.
        """
        forms: dict[str, str] = {}
        for token in sorted(self.secrets):
            value = self.values.get(token)
            if isinstance(value, str):
                label = f"<secret Pulumi Input #{self.tokens.index(token) + 1}>"
                forms.update(value_forms(value, label))
        return hide_forms(findings, forms)


def value_forms(value: str, label: str) -> dict[str, str]:
    """Each form in which a finding may repeat ``value`` (as given, lowercased, made into
    a valid name for an ``e.g. …``) → ``label``, the text to show instead."""
    variants = {value, value.lower(), suggest_name(value), suggest_name(value, True)}
    # "x" is what a name with no valid letter becomes, not a form of the value.
    return {v: label for v in variants if v and (v != "x" or value == "x")}


def hide_forms(findings: Iterable[Finding], forms: Mapping[str, str]) -> list[Finding]:
    """``findings`` with each text of ``forms`` replaced by its label (longest first) in
    every field, also inside a name made from it (``Pod <namespace>/<name>``)."""
    if not forms:
        return list(findings)
    ordered = sorted(forms, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(v) for v in ordered))

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda m: forms[m.group(0)], value)
        if isinstance(value, Mapping):
            return {clean(k): clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value

    return [
        replace(
            f,
            path=clean(f.path),
            message=clean(f.message),
            hint=clean(f.hint),
            value=clean(f.value),
            source=clean(f.source),
        )
        for f in findings
    ]
