"""The matrix spec (``matrix.toml``): one base build spec and the axes it varies along.

```toml
spec = "seed-002-cresset-train-images.toml"  # optional, relative to this file
name = "seed-002"
runs_on = "ubuntu-22.04"
image = "python:3.11-bookworm"

[base]                 # build-spec keys laid over the spec file (same names as in it)
backend = "local"

[axes]                 # one combination per element of the product
gpus = [["8.6"], ["7.5", "8.6"]]

[cache.env]            # environment of every job: only references to the CI engine's store
TORCHSMITH_CACHE_LOCATION = "vars.TORCHSMITH_CACHE_LOCATION"
AWS_SECRET_ACCESS_KEY = "secrets.AWS_SECRET_ACCESS_KEY"
```
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from torchsmith.errors import Problem, SpecError
from torchsmith.spec_text import ImageRef, no_control

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Every pattern is used with fullmatch: ``$`` lets a trailing newline through (``"inj\n"``),
# which became a second shell command in the job's ``run:`` (security review f1b4bec, N7).
REFERENCE = re.compile(r"(secrets|vars)\.[A-Za-z_][A-Za-z0-9_]*")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NAME = re.compile(r"[a-z][a-z0-9-]{0,40}")
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A runner label (``ubuntu-22.04``, ``self-hosted``): no ``${{ }}`` expression, no space."""
SELF = "."
GIT_PIN = re.compile(r"git\+\S+@[0-9a-f]{40}")
URL_PIN = re.compile(r"\S+#sha256=[0-9a-f]{64}")


def pinned(requirement: str) -> bool:
    """Exactly one release (``NAME==X``, no wildcard, no environment marker), a URL with
    ``#sha256=``, or a git URL at a 40-hex commit. ``torchsmith>=0.1 ; python_version ==
    '3.11'`` is none of these (the old check found ``==`` in its marker)."""
    if GIT_PIN.fullmatch(requirement):
        return True
    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return False
    if req.marker is not None or req.extras:
        return False
    if req.url:
        return not req.specifier and bool(URL_PIN.fullmatch(req.url) or GIT_PIN.fullmatch(req.url))
    specs = list(req.specifier)
    return len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*")
    @classmethod
    def _one_line(cls, value: Any) -> Any:  # every value reaches a workflow or a bake file
        return no_control(value)


class MatrixCache(_Strict):
    """How every job reaches the shared compiler cache: environment variables whose values are
    references to the CI engine's variables (``vars.NAME``) or secrets (``secrets.NAME``)."""

    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("env")
    @classmethod
    def _references_only(cls, env: dict[str, str]) -> dict[str, str]:
        for name, ref in env.items():
            if not ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not an environment variable name")
            if not REFERENCE.fullmatch(ref):
                raise ValueError(
                    f"{name} = {ref!r}: give a reference (vars.NAME or secrets.NAME), never a "
                    "value: the workflow and bake file are committed and published"
                )
        return env


class MatrixSpec(_Strict):
    name: str = Field("torchsmith", description="Prefix of job and target names.")
    spec: str | None = Field(None, description="Base build spec file, relative to this file.")
    base: dict[str, Any] = Field(default_factory=dict, description="Spec keys over the file.")
    axes: dict[str, list[Any]] = Field(description="Spec key -> the values it takes.")
    runs_on: str = Field("ubuntu-22.04", description="GitHub Actions runner label.")
    timeout_minutes: int = Field(360, ge=1, le=4320, description="Per job (GitHub max 4320).")
    image: ImageRef = Field(
        "python:3.11-bookworm",
        description="Container image the jobs run torchsmith in (GitHub job container, bake's "
        "FROM): Debian 12 with Python, the platform torchsmith plans for and is tested on.",
    )
    torchsmith: str = Field(
        SELF,
        description="How a job installs torchsmith: '.' (the default) the checked-out "
        "repository the workflow / bake file lives in; else a pinned pip requirement "
        "('torchsmith==0.1.0', 'torchsmith @ https://…/torchsmith-0.1.0.tar.gz#sha256=…').",
    )
    cache: MatrixCache = Field(default_factory=MatrixCache)

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not NAME.fullmatch(name):
            raise ValueError("a lower-case letter, then letters, digits and '-' (41 at most)")
        return name

    @field_validator("runs_on")
    @classmethod
    def _label(cls, label: str) -> str:
        if not LABEL.fullmatch(label):
            raise ValueError(
                f"{label!r} is not a runner label (letters, digits, . _ -), e.g. ubuntu-22.04: "
                "a ${{ }} expression there would be evaluated by the CI engine"
            )
        return label

    @field_validator("torchsmith")
    @classmethod
    def _pinned(cls, requirement: str) -> str:
        if requirement != SELF and not pinned(requirement):
            raise ValueError(
                f"{requirement!r} is not pinned: the jobs run it with the cache's secrets; give "
                "'.', NAME==VERSION, a URL with #sha256=, or git+URL@<40-hex commit>"
            )
        return requirement

    @field_validator("axes")
    @classmethod
    def _axes(cls, axes: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if not axes or any(not values for values in axes.values()):
            raise ValueError("name at least one axis, each with at least one value")
        twice = {k: _repeated(values) for k, values in axes.items() if _repeated(values)}
        if twice:  # each would be one more identical job (issue 28 item 8)
            listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in twice.items())
            raise ValueError(f"an axis lists a value twice ({listed}): give each value once")
        return axes


def _repeated(values: list[Any]) -> list[str]:
    """The values (as JSON text: a GPU set is a list) that an axis lists more than once."""
    texts = [json.dumps(v, sort_keys=True) for v in values]
    return sorted({t for t in texts if texts.count(t) > 1})


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise SpecError([Problem(f"matrix spec {path} {what}", "check the path given to --spec")])
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(
            [Problem(f"cannot read the matrix spec {path}: {exc}", "give a TOML file")]
        ) from exc
    except RecursionError:  # tomllib recurses per nesting level: `a = [[[[…` exhausts it
        raise SpecError(
            [Problem(f"the matrix spec {path} is nested too deeply", "give a plain TOML file")]
        ) from None
    return data


def load_matrix(path: Path) -> MatrixSpec:
    data = _read_toml(path)
    try:
        return MatrixSpec.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(
                f"{'.'.join(str(p) for p in e['loc']) or 'matrix'}: {e['msg']}",
                "see torchsmith/matrix/model.py's example (spec, base, axes, cache.env)",
            )
            for e in exc.errors()
        ]
        raise SpecError(problems, f"fix {path}") from exc
