"""What the doctor returns: frozen records that the CLI prints and the build pipeline keeps."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from torchsmith.doctor.ruledb import Rule, Severity, Stage


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Evidence(_Frozen):
    """One line of the log, with its 1-based line number."""

    line: int
    text: str


BlockKind = Literal["ninja", "make", "diagnostic", "cmake", "python", "other"]


class ErrorBlock(_Frozen):
    """The output of one failed step, separated from interleaved parallel output."""

    kind: BlockKind
    start_line: int
    target: str | None = Field(None, description="ninja/make target or source file, if known")
    lines: tuple[Evidence, ...] = Field(description="the block's error lines, at most a few dozen")
    context: tuple[Evidence, ...] = Field(
        (), description="the lines around the block's first error (a failed command's output)"
    )

    @property
    def first(self) -> Evidence:
        return self.lines[0]


ErrorKind = Literal[
    "killed",
    "missing-header",
    "linker-undefined",
    "linker-missing-lib",
    "linker",
    "import-missing-lib",
    "import-symbol",
    "import-version",
    "import-module",
    "tool-missing",
    "crash",
    "cmake",
    "command-failed",
    "compiler",
    "pip",
    "python",
    "ninja",
    "other",
]


class TypedError(_Frozen):
    """The first real failure, parsed: its class and the fields that say what is missing."""

    kind: ErrorKind
    line: int
    message: str = Field(description="the failure's text; a CMake block joined, gcc wording")
    tool: str | None = None
    file: str | None = None
    header: str | None = None
    symbol: str | None = Field(None, description="demangled scope first, then the raw symbol")
    library: str | None = None
    module: str | None = None
    exception: str | None = None
    target: str | None = None
    versions: tuple[str, ...] = Field((), description="version numbers the message quotes")


class Finding(_Frozen):
    """A rule that matched, with the lines that show it."""

    rule_id: str
    title: str
    category: str
    tags: tuple[str, ...] = ()
    severity: Severity
    stage: Stage
    cause: str
    fix: str
    fix_env: dict[str, str] = Field(default_factory=dict)
    fix_packages: tuple[str, ...] = ()
    affected: str
    source: str
    evidence: tuple[Evidence, ...]
    count: int = Field(description="how many lines matched in the whole log")
    in_first_error: bool = Field(description="the match lies in the first real error block")
    context_fit: bool | None = Field(
        None, description="the rule's version ranges hold for the given context (None: unknown)"
    )
    score: float
    generic: bool = Field(
        False, description="the generic diagnosis of the error's class, not a specific rule"
    )
    similar_case: str | None = Field(
        None,
        description="set when no rule matched and this is the rule of the known case most like "
        "the log (a generic finding): the case's public source and how alike the two are",
    )

    @classmethod
    def of(cls, rule: Rule, **kwargs: object) -> Finding:
        return cls.model_validate(
            {
                "rule_id": rule.id,
                "title": rule.title,
                "category": rule.category,
                "tags": rule.tags,
                "severity": rule.severity,
                "stage": rule.stage,
                "cause": rule.cause,
                "fix": rule.fix,
                "fix_env": dict(rule.fix_env),
                "fix_packages": rule.fix_packages,
                "affected": rule.affected,
                "source": rule.source,
                **kwargs,
            }
        )


class Diagnosis(_Frozen):
    """The doctor's verdict on one log: findings ranked best first, and the first real error."""

    findings: tuple[Finding, ...] = ()
    first_error: ErrorBlock | None = None
    error: TypedError | None = Field(None, description="the first real failure, parsed")
    error_blocks: int = Field(0, description="how many separate error blocks the log holds")
    lines_scanned: int = 0
    bytes_scanned: int = 0
    cut_short: str | None = Field(
        None,
        description="why the log could not be read to its end (a truncated .gz): only "
        "the lines before that were analysed",
    )

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    @property
    def cause(self) -> Finding | None:
        """The best-ranked specific rule of severity error: what the build pipeline reports."""
        return next((f for f in self.findings if f.severity == "error" and not f.generic), None)

    @property
    def generic(self) -> Finding | None:
        """The generic diagnosis of the first error's class (when no specific rule explains)."""
        return next((f for f in self.findings if f.generic), None)

    @property
    def failed(self) -> bool:
        """The log shows a real error (known or not)."""
        return (
            self.first_error is not None
            or self.error is not None
            or any(f.severity == "error" for f in self.findings)
        )

    @property
    def known_cause(self) -> bool:
        return self.cause is not None

    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")
