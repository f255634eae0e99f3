"""Shared state of one planning run: the inputs, and the problems collected so far (every
conflict is reported at once, so planners append instead of raising)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from packaging.version import Version

from torchsmith.errors import Problem, UnknownEntryError
from torchsmith.host.model import HostFacts
from torchsmith.kb import KnowledgeBase
from torchsmith.kb.models import Release
from torchsmith.plan_model import Decision, DecisionOrigin, ReadinessItem
from torchsmith.spec import BuildSpec
from torchsmith.spec_sources import Origin

T = TypeVar("T")


def minor_version(text: str) -> Version:
    """'3.10', '3.10.13' and '3.13t' as their minor version."""
    return Version(".".join(text.removesuffix("t").split(".")[:2]))


@dataclass
class Ctx:
    spec: BuildSpec
    origins: dict[str, Origin]
    kb: KnowledgeBase
    host: HostFacts
    release: Release | None = None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    readiness: list[ReadinessItem] = field(default_factory=list)
    """The machine's answer (planner/readiness.py), kept apart from ``problems``."""

    def debian_system_python(self) -> bool:
        """A Debian source built with the suite's own python3 (no --python, or the same
        minor): the venv is made over /usr/bin/python3 and sees Debian's python3-* packages."""
        if self.spec.source != "debian" or self.release is None:
            return False
        try:
            pkg = self.kb.debian_package("pytorch", self.release.torch)
        except UnknownEntryError:
            return False
        wanted, own = self.spec.python, pkg.python
        return own is None or wanted is None or minor_version(wanted) == minor_version(own)

    def asked(self, key: str) -> bool:
        """Did the user set this key (file, env or CLI) rather than leave the default?"""
        return key in self.origins

    def user(self, key: str, value: T, what: str = "") -> Decision[T]:
        where = {"file": "spec file", "env": "environment", "cli": "command line"}
        src = where.get(self.origins.get(key, "cli"), "request")
        return Decision(value=value, origin="user", reason=what or f"asked for ({src})")

    def problem(self, what: str, fix: str = "", field_name: str = "") -> None:
        self.problems.append(Problem(what, fix, field_name))


def decide(value: T, origin: DecisionOrigin, reason: str) -> Decision[T]:
    return Decision(value=value, origin=origin, reason=reason)
