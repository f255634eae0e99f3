"""The doctor's rule database: ``doctor/rules/*.toml``, one file per category, loaded once.

A rule says what a failure looks like in a log (regular expressions, one line each), when it
applies (the build stage, PEP 440 version ranges compared with a manifest or plan), the cause in
plain words, the fix, and the public report its log text was copied from. A malformed rule —
a bad regex, a duplicate id, a source that is not a URL — is a :class:`KnowledgeBaseError` at
load time, naming the file and the rule.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Mapping
from importlib import resources
from typing import Any, Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from torchsmith.doctor.linear import check_linear
from torchsmith.errors import KnowledgeBaseError
from torchsmith.kb.models import SOURCE_RE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Severity = Literal["error", "warning"]
Stage = Literal[
    "image", "configure", "codegen", "compile", "link", "install", "import", "runtime"
]
CONTEXT_KEYS = ("torch", "cuda", "gcc", "python", "cmake", "cudnn", "numpy")


class FixWhen(BaseModel):
    """A fix that comes first when the log says which case it is (a GPU's name, a container, a
    package): ``match`` is searched in the finding's evidence and the first error block."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: str = Field(description="linear-time regex over the evidence and first block")
    fix: str

    @field_validator("match")
    @classmethod
    def _linear(cls, value: str) -> str:
        why = check_linear(value)
        if why is not None:
            raise ValueError(f"fix_when match {value!r} is not linear-time (RE2: {why})")
        return value


class Rule(BaseModel):
    """One known failure mode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]+$")
    category: str
    tags: tuple[str, ...] = Field((), description="keywords: the library or tool involved")
    severity: Severity
    stage: Stage
    priority: int = Field(50, ge=0, le=100, description="specificity: higher wins ties")
    title: str
    patterns: tuple[str, ...] = Field(min_length=1, description="one-line regexes")
    feature: str | None = Field(None, description="feature a 'warning' rule switches off")
    when: dict[str, str] = Field(
        default_factory=dict, description="component -> PEP 440 range it applies to"
    )
    cause: str
    fix: str
    fix_env: dict[str, str] = Field(default_factory=dict)
    fix_packages: tuple[str, ...] = ()
    fix_when: tuple[FixWhen, ...] = Field(
        (), description="fixes put first when the log names their case (first match wins)"
    )
    affected: str
    source: str = Field(description="public report URL, or owner/repo@tag:path")
    explains: tuple[str, ...] = Field(
        (),
        description="ids of rules whose failure this cause produces (a symptom or a cascade): "
        "when both match, this one ranks first",
    )

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
            why = check_linear(pattern)
            if why is not None:
                raise ValueError(
                    f"pattern {pattern!r} is not linear-time (RE2 refuses it: {why}); "
                    "write it without lookaround or backreferences"
                )
            if not needle(pattern):
                raise ValueError(
                    f"pattern {pattern!r} has no plain text outside groups, classes and "
                    "alternation (inline flags such as (?i) count as none): the log scanner "
                    "needs a literal string every match contains"
                )
        return value

    @field_validator("when")
    @classmethod
    def _ranges(cls, value: dict[str, str]) -> dict[str, str]:
        for key, spec in value.items():
            if key not in CONTEXT_KEYS:
                raise ValueError(f"when: unknown component {key!r} (known: {CONTEXT_KEYS})")
            try:
                SpecifierSet(spec)
            except InvalidSpecifier as exc:
                raise ValueError(f"when.{key}: {spec!r} is not a version range") from exc
        return value

    @field_validator("source")
    @classmethod
    def _sourced(cls, value: str) -> str:
        if not SOURCE_RE.match(value):
            raise ValueError(f"source {value!r}: use a URL or owner/repo@tag:path")
        return value

    def context_fit(self, context: Mapping[str, str]) -> bool | None:
        """True/False when the context says whether the rule's version ranges hold; None when
        the rule has no ranges or the context names none of its components."""
        verdicts = [
            _in_range(context[key], spec) for key, spec in self.when.items() if key in context
        ]
        known = [v for v in verdicts if v is not None]
        return all(known) if known else None


def _in_range(version: str, spec: str) -> bool | None:
    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except InvalidVersion:
        return None


def literal_runs(pattern: str) -> list[str]:
    """The plain-text runs every match of ``pattern`` must contain, outside groups and classes
    ([] for a pattern with top-level alternation or inline flags)."""
    if "(?i" in pattern or any(
        c == "|" and not _inside_group_or_class(pattern, i) for i, c in enumerate(pattern)
    ):
        return []
    runs: list[str] = []
    cur: list[str] = []
    depth, i = 0, 0
    while i < len(pattern):
        char, nxt = pattern[i], pattern[i + 1 : i + 2]
        i += 1
        if char == "\\":
            i += 1
            literal = nxt and not (nxt.isalnum() or nxt == "_" or nxt.isspace())
            if literal and depth == 0:
                cur.append(nxt)
            else:
                _flush(runs, cur)
        elif char == "[":
            i = pattern.index("]", i + 1) + 1 if "]" in pattern[i + 1 :] else len(pattern)
            _flush(runs, cur)
        elif char in "?*{":
            cur[-1:] = []
            _flush(runs, cur)
            if char == "{":
                i = pattern.find("}", i) + 1 or len(pattern)
        elif char in "()":
            depth += 1 if char == "(" else -1
            _flush(runs, cur)
        elif char in ".^$+|":
            _flush(runs, cur)
        elif depth == 0:
            cur.append(char)
    _flush(runs, cur)
    return runs


def _flush(runs: list[str], cur: list[str]) -> None:
    if cur:
        runs.append("".join(cur))
        cur.clear()


def needle(pattern: str) -> str:
    """The longest of :func:`literal_runs` ('' if none): a cheap ``needle in line`` test to
    run before the regex."""
    return max(literal_runs(pattern), key=len, default="")


def _inside_group_or_class(pattern: str, pos: int) -> bool:
    """Whether ``pos`` lies inside a (...) group or a [...] class of ``pattern``."""
    depth, in_class, i = 0, False, 0
    while i < pos:
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        i += 1
    return depth > 0 or in_class


@functools.cache
def load_rules() -> tuple[Rule, ...]:
    """Every rule of ``doctor/rules/*.toml``, validated; ids are unique."""
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    folder = resources.files("torchsmith.doctor") / "rules"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            for rule in _parse_file(entry.name, entry.read_text(encoding="utf-8")):
                if rule.id in seen:
                    raise KnowledgeBaseError(
                        f"doctor rule {rule.id!r} is defined in {seen[rule.id]} and {entry.name}"
                    )
                seen[rule.id] = entry.name
                rules.append(rule)
    _check_explains(rules, seen)
    return tuple(rules)


def _check_explains(rules: list[Rule], seen: Mapping[str, str]) -> None:
    for rule in rules:
        unknown = [i for i in rule.explains if i not in seen or i == rule.id]
        if unknown:
            raise KnowledgeBaseError(
                f"doctor rule {rule.id!r} ({seen[rule.id]}) explains unknown rule(s) {unknown}"
            )


def _parse_file(name: str, text: str) -> list[Rule]:
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise KnowledgeBaseError(f"doctor/rules/{name} is not valid TOML: {exc}") from exc
    rules = []
    for row in data.get("rule", []):
        try:
            rules.append(Rule.model_validate(row))
        except ValidationError as exc:
            raise KnowledgeBaseError(
                f"doctor/rules/{name}: bad rule {row.get('id')!r}:\n{exc}",
                "fix the rule file; every rule needs patterns that compile, hold some literal "
                "text, and a public source",
            ) from exc
    return rules


def rule_by_id(rule_id: str) -> Rule:
    for rule in load_rules():
        if rule.id == rule_id:
            return rule
    raise KeyError(rule_id)
