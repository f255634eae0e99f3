"""The error hierarchy.

Every error torchsmith raises on purpose derives from :class:`TorchsmithError`. Each class has
its own exit code and carries a ``hint`` (what to do). Only :func:`torchsmith.cli.main` catches
them, prints them and turns them into an exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a request: what, why, and the way out."""

    what: str
    fix: str = ""
    field: str = ""

    def render(self) -> str:
        text = f"{self.field}: {self.what}" if self.field else self.what
        return f"{text}\n    → {self.fix}" if self.fix else text


class TorchsmithError(Exception):
    """Base of every deliberate torchsmith error."""

    exit_code = 1
    title = "error"

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def render(self) -> str:
        return f"{self.message}\n→ {self.hint}" if self.hint else self.message


class UsageError(TorchsmithError):
    """Bad command-line usage."""

    exit_code = 2
    title = "usage error"


class SpecError(TorchsmithError):
    """The build spec is invalid; holds every problem found, not just the first."""

    exit_code = 3
    title = "invalid build spec"

    def __init__(self, problems: Sequence[Problem], hint: str = "") -> None:
        self.problems = tuple(problems)
        lines = [f"{len(self.problems)} problem(s) in the build spec:"]
        lines += [f"  - {p.render()}" for p in self.problems]
        super().__init__("\n".join(lines), hint)


class PlanError(TorchsmithError):
    """The request is well-formed but cannot be built: every conflict is listed."""

    exit_code = 4
    title = "cannot plan this build"

    def __init__(self, problems: Sequence[Problem], hint: str = "") -> None:
        self.problems = tuple(problems)
        lines = [f"{len(self.problems)} conflict(s) in the request:"]
        lines += [f"  - {p.render()}" for p in self.problems]
        super().__init__("\n".join(lines), hint)


class NotReadyError(PlanError):
    """The combination is valid, but the machine lacks what torchsmith cannot supply
    (`build`'s gate on the plan's readiness table): the same exit code as a refused plan."""

    title = "this machine cannot build it yet"

    def __init__(self, problems: Sequence[Problem], hint: str = "") -> None:
        super().__init__(problems, hint)
        lines = [f"{len(self.problems)} tool(s) missing on this machine:"]
        lines += [f"  - {p.render()}" for p in self.problems]
        self.message = "\n".join(lines)


class KnowledgeBaseError(TorchsmithError):
    """A knowledge-base data file is malformed (a fact without a source, a bad value...)."""

    exit_code = 5
    title = "knowledge base error"


class UnknownEntryError(TorchsmithError):
    """A lookup in the knowledge base found nothing (unknown release, GPU, CUDA version)."""

    exit_code = 6
    title = "not in the knowledge base"


class HostError(TorchsmithError):
    """This machine lacks something the plan needs (compiler, disk, tool, network)."""

    exit_code = 7
    title = "host not ready"


class ToolError(TorchsmithError):
    """An external command failed; carries the log path and the relevant lines."""

    exit_code = 8
    title = "command failed"

    def __init__(
        self,
        message: str,
        hint: str = "",
        *,
        log_path: str | None = None,
        excerpt: Sequence[str] = (),
        returncode: int | None = None,
    ) -> None:
        super().__init__(message, hint)
        self.log_path = log_path
        self.excerpt = tuple(excerpt)
        self.returncode = returncode

    def render(self) -> str:
        parts = [self.message]
        if self.excerpt:
            parts.append("relevant lines:")
            parts += [f"  | {line}" for line in self.excerpt]
        if self.log_path:
            parts.append(f"full log: {self.log_path}")
        if self.hint:
            parts.append(f"→ {self.hint}")
        return "\n".join(parts)


class SourceError(TorchsmithError):
    """Fetching or checking the source tree failed."""

    exit_code = 9
    title = "source error"


class BuildError(ToolError):
    """A build stage failed."""

    exit_code = 10
    title = "build failed"


class VerifyError(TorchsmithError):
    """A built artifact does not hold what the plan asked for."""

    exit_code = 11
    title = "verification failed"


class InspectError(TorchsmithError):
    """An artifact could not be inspected (not a wheel, not a torch, unreadable)."""

    exit_code = 12
    title = "cannot inspect"


class PublishError(TorchsmithError):
    """An artifact could not be published (target refused it, unreachable, name taken)."""

    exit_code = 13
    title = "cannot publish"


class InterruptError(TorchsmithError):
    """The user pressed Ctrl-C; work done so far is kept and the same command resumes."""

    exit_code = 130
    title = "interrupted"


class InternalError(TorchsmithError):
    """torchsmith broke one of its own invariants (a bug, not the user's input)."""

    exit_code = 70
    title = "internal error"
