"""What makes two builds of one plan give the same bytes, whatever the workspace path, the
compiler cache's state or the clock (issue 29): decisions of the plan, each with its reason.

* ``SOURCE_DATE_EPOCH`` (https://reproducible-builds.org/specs/source-date-epoch/): the date
  of the source's last change. The planner reads no files, so for a git source (torch's, or a
  companion's) it plans *how* the epoch is got — the committer date of the commit fetched —
  and for a Debian source the date of ``debian/changelog``'s top entry (dpkg-parsechangelog's
  ``-STimestamp``), else the release's date; the fetch step resolves it
  (:mod:`torchsmith.sources.epoch`) and records it with the source. Every other source (a
  tarball, a path, ``--against``) gets the release's date as the knowledge base records it
  (``kb/data/releases.toml`` ``date``, with its source), midnight UTC. :func:`build_epoch` is
  the one answer to "the epoch of this build" that every step asks. setuptools'
  ``bdist_wheel`` (pypa/wheel@0.48.0:src/wheel/wheelfile.py ``get_zipinfo_datetime``) and
  auditwheel's re-zip read it; torchsmith's own normalisation of the final wheel
  (:mod:`torchsmith.packaging.wheel_normal`) stamps every member with it.
* Deterministic static archives: CMake's archive rules with ``ar``'s ``D`` modifier (zero
  timestamps, uids and modes: binutils ``ar`` manual, "D"), forwarded to CMake by the release's
  setup.py as every ``CMAKE_*`` variable is (pytorch/pytorch@v1.13.1:tools/setup_helpers/cmake.py
  "We currently pass over all environment variables that start with BUILD_, USE_, and CMAKE_").
* No enclosing repository: the version files ask git about the tree (torch:
  pytorch/pytorch@v1.13.1:tools/generate_torch_version.py ``get_sha``/``get_tag``, ``git rev-parse
  HEAD`` and ``git describe --tags --exact`` with the tree as cwd; torchvision:
  pytorch/vision@v0.21.0:setup.py ``get_version``/``write_version_file``, ``git rev-parse HEAD``),
  and git walks up from a tree that is no repository (a Debian or tarball source) into whatever
  repository holds the workspace — a cache root inside a project's checkout would stamp that
  project's commit into ``torch/version.py``'s ``git_version``. ``GIT_DIR=/dev/null`` makes
  those calls fail as they do for a tree in no repository ("Unknown").
* Workspace paths: no ``-ffile-prefix-map`` in ``CXXFLAGS`` — torch records CMAKE_CXX_FLAGS in
  its binary (pytorch/pytorch@v1.13.1:caffe2/core/macros.h.in ``CAFFE2_BUILD_STRINGS``
  ``{"CXX_FLAGS", "${CMAKE_CXX_FLAGS}"}``, shown by ``torch.__config__.show()``), so a flag naming
  the workspace would itself put the path into libtorch. The compiler cache's ``base_dir``
  (``CCACHE_BASEDIR``: the cache root, ``CCACHE_NOHASHDIR``; :mod:`torchsmith.cache.launcher`)
  rewrites the compiler's own arguments to relative paths, so ``__FILE__`` is the same in every
  workspace (measured: docs/reproducible.md); without a compiler cache the objects name the
  workspace, and the plan says so.
* The build tree's RPATH: CMake links each shared library and executable of the build tree with
  a RUNPATH naming the build directory by its absolute path (torch keeps that build RPATH:
  pytorch/pytorch@v1.13.1:cmake/Dependencies.cmake ``CMAKE_SKIP_BUILD_RPATH FALSE``). The
  linker's build-id is a hash of the whole output, that string included, and CMake's install
  rewrites the RUNPATH in place to ``$ORIGIN``, padding the old string's length with NULs, so
  ``.dynstr`` differs as well (measured in the whole 1.13.1 wheel: only ``.note.gnu.build-id``,
  ``.dynstr``, ``.dynamic`` differed). ``CMAKE_BUILD_RPATH_USE_ORIGIN`` makes the build RPATH
  ``$ORIGIN``-relative (CMake >= 3.14), the same in every workspace.
* setup.py's own extensions (torch 1.13: ``torch._C`` and ``torch._C_flatbuffer``, a stub each,
  pytorch/pytorch@v1.13.1:setup.py ``Extension``) are compiled by setuptools with the
  interpreter's CFLAGS (Debian's python3.11: ``-g``), no compiler cache: their DWARF names the
  tree as the compilation directory. ``CPPFLAGS`` (which distutils appends to those commands and
  CMake never reads) maps it to ``.``; the plan writes the tree as :data:`TREE`, put in by the
  environment step, so the plan names no path of the machine.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from torchsmith.errors import InternalError
from torchsmith.kb.models import Release
from torchsmith.plan_model import BuildPlan, EnvSetting
from torchsmith.plan_types import CompanionBuild, EnvValue
from torchsmith.planner.context import Ctx

ZIP_EPOCH = 315532800
"""1980-01-01T00:00:00Z, the earliest time a zip member can hold (PKWARE APPNOTE 4.4.6, MS-DOS
date): the floor of every timestamp torchsmith writes, and the epoch of a release without a
recorded date."""
SPEC = "https://reproducible-builds.org/specs/source-date-epoch/"
AR_MANUAL = "https://sourceware.org/binutils/docs/binutils/ar-cmdline.html (modifier D)"
CMAKE_FORWARD = "pytorch/pytorch@v1.13.1:tools/setup_helpers/cmake.py (CMAKE_* forwarded)"
ARCHIVE_RULES = {
    "ARCHIVE_CREATE": "<CMAKE_AR> qcD <TARGET> <LINK_FLAGS> <OBJECTS>",
    "ARCHIVE_APPEND": "<CMAKE_AR> qD <TARGET> <LINK_FLAGS> <OBJECTS>",
    "ARCHIVE_FINISH": "<CMAKE_RANLIB> -D <TARGET>",
}
"""CMake's defaults (Modules/CMakeCInformation.cmake: ``qc``, ``q``, ``<CMAKE_RANLIB>``) with
``ar``'s and ``ranlib``'s deterministic mode."""


def date_epoch(date: str) -> int:
    """'2025-01-29' as seconds since 1970 at midnight UTC (never before :data:`ZIP_EPOCH`)."""
    day = dt.datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=dt.timezone.utc)
    return max(ZIP_EPOCH, int(day.timestamp()))


def release_date(release: Release | None) -> tuple[int, str]:
    """The epoch of ``release`` and why: its recorded date, else the zip floor."""
    if release is None or not release.date:
        return ZIP_EPOCH, "no release date recorded: the fixed 1980-01-01, the zip format's floor"
    source = release.sources.get("date", release.sources.get("*", "the knowledge base"))
    why = f"torch {release.torch}'s release date {release.date} (kb releases.toml: {source})"
    return date_epoch(release.date), why


EPOCH = "SOURCE_DATE_EPOCH"
COMMIT_DATE = "commit-date"
CHANGELOG = "debian-changelog"
EpochHow = Literal["commit-date", "debian-changelog", "fixed"]
_RULE = re.compile(r"^(commit-date|debian-changelog)(?: else (\d+))?$")
_EVERY_TIME = (
    f"every time the build writes (wheel members, archives) is this one, never the clock ({SPEC})"
)


@dataclass(frozen=True)
class EpochRule:
    """How the epoch of a build is got: ``fixed`` (the plan's number), or resolved when the
    source is fetched (``commit-date``, ``debian-changelog``; ``fallback``: the changelog's
    absence)."""

    how: EpochHow
    fallback: int | None = None

    @property
    def value(self) -> str:
        """The plan's spelling: ``1738108800``, ``commit-date``, ``debian-changelog else N``."""
        if self.how == "fixed":
            return str(self.fallback)
        return self.how if self.fallback is None else f"{self.how} else {self.fallback}"


def epoch_rule(value: str) -> EpochRule:
    """The rule a plan's ``SOURCE_DATE_EPOCH`` value spells (:attr:`EpochRule.value`)."""
    if value.isdigit():
        return EpochRule("fixed", int(value))
    match = _RULE.match(value)
    if match is None:
        raise InternalError(f"{EPOCH} = {value!r} is no epoch rule", "report this as a bug")
    how: EpochHow = "commit-date" if match[1] == COMMIT_DATE else "debian-changelog"
    return EpochRule(how, int(match[2]) if match[2] else None)


def _fixed_reason(why: str) -> str:
    return f"{why}, midnight UTC: {_EVERY_TIME}"


def epoch_of_source(kind: str | None, release: Release | None) -> tuple[EpochRule, str]:
    """The rule for a source of ``kind`` (None: Debian's source package of a companion) and
    why: a git commit's date, Debian's changelog (else the release's date), or the release's."""
    epoch, why = release_date(release)
    if kind == "git":
        return EpochRule("commit-date"), (
            "the committer date of the commit fetched (git show -s --format=%ct COMMIT, run "
            "by the fetch step; recorded with the source as epoch/epoch_from): the source's "
            f"own last change, so two commits get two epochs and one commit one; {_EVERY_TIME}"
        )
    if kind in ("debian", None):
        return EpochRule("debian-changelog", epoch), (
            "the date of debian/changelog's top entry (its trailer line, as "
            "dpkg-parsechangelog -STimestamp reads it), read by the fetch step and recorded "
            f"with the source; without it (the mirror serves no packaging tarball): {why}, "
            f"midnight UTC; {_EVERY_TIME}"
        )
    return EpochRule("fixed", epoch), _fixed_reason(why)


def source_date_epoch(ctx: Ctx) -> EnvSetting:
    """torch's own build: how its source's epoch is got (:func:`epoch_of_source`)."""
    kind = "path" if ctx.spec.against else ctx.spec.source.split(":")[0]  # --against: no torch
    rule, why = epoch_of_source(kind, ctx.release)
    return EnvSetting(name=EPOCH, value=rule.value, reason=why)


def companion_epoch(kind: str | None, release: Release | None) -> EnvValue:
    """A companion's: its own git commit's date, its Debian changelog's, or the release date
    of the torch it is paired with (the KB pairs each companion release with a torch's)."""
    rule, why = epoch_of_source(kind, release)
    return EnvValue(name=EPOCH, value=rule.value, reason=why)


def epoch_rule_of(value: str | None) -> EpochRule:
    """The rule of a plan's value; a plan written before it (None): the fixed 1980-01-01."""
    return epoch_rule(value) if value else EpochRule("fixed", ZIP_EPOCH)


def build_epoch(value: str | None, source: Mapping[str, Any] | None) -> int:
    """THE epoch of a build: the plan's ``SOURCE_DATE_EPOCH`` value (``value``; None: a plan
    written before it, 1980) and, for a rule resolved at fetch, the fetched source's record
    (``epoch``: the source record of the manifest, a companion's fetch record)."""
    rule = epoch_rule_of(value)
    if rule.how == "fixed" and rule.fallback is not None:
        return rule.fallback
    epoch = (source or {}).get("epoch")
    if not str(epoch).isdigit():
        raise InternalError(
            f"{EPOCH} is resolved when the source is fetched ({rule.value}), but the fetched "
            "source records none",
            "the plan's steps are out of order; report this as a torchsmith bug",
        )
    return int(str(epoch))


def plan_epoch(plan: BuildPlan, source: Mapping[str, Any] | None) -> int:
    """torch's build: :func:`build_epoch` of the plan's value."""
    return build_epoch(plan.env_dict().get(EPOCH), source)


def companion_build_epoch(
    plan: BuildPlan, comp: CompanionBuild, source: Mapping[str, Any] | None
) -> int:
    """A companion's: its own planned value (plans before it: the plan's), its fetch record."""
    own = next((v.value for v in comp.env if v.name == EPOCH), None)
    return build_epoch(own or plan.env_dict().get(EPOCH), source)


def archive_env(ctx: Ctx) -> list[EnvSetting]:
    """ar's deterministic mode for every static library CMake makes (releases whose setup.py
    forwards CMAKE_* variables; the legacy ones (≤ 1.1) do not)."""
    if ctx.release is not None and ctx.release.env_style == "legacy-no":
        return []
    why = (
        f"deterministic static archives: no timestamps, uids or modes in the members ({AR_MANUAL}"
        f"; Debian's binutils defaults to it, others do not); setup.py forwards it "
        f"({CMAKE_FORWARD})"
    )
    return [
        EnvSetting(name=f"CMAKE_{lang}_{rule}", value=value, reason=why)
        for lang in ("C", "CXX")
        for rule, value in ARCHIVE_RULES.items()
    ]


RPATH_ORIGIN = "https://cmake.org/cmake/help/latest/variable/CMAKE_BUILD_RPATH_USE_ORIGIN.html"


def rpath_env(ctx: Ctx) -> list[EnvSetting]:
    """The build tree's RPATH relative to ``$ORIGIN`` (see the module's note)."""
    if ctx.release is not None and ctx.release.env_style == "legacy-no":
        return []
    why = (
        "the build tree's RUNPATH names the build directory by its absolute path: the linker's "
        "build-id hashes it and CMake's install pads its length into .dynstr, so the workspace "
        f"path changes every shared library ({RPATH_ORIGIN}, CMake >= 3.14; measured: "
        f"docs/reproducible.md); setup.py forwards it ({CMAKE_FORWARD})"
    )
    return [EnvSetting(name="CMAKE_BUILD_RPATH_USE_ORIGIN", value="ON", reason=why)]


TREE = "{tree}"
"""In a plan's variable: the fetched source tree, put in by the environment step (a plan names
no path of the machine: it hashes the same in every workspace)."""
DISTUTILS_CPPFLAGS = (
    "pypa/setuptools@v66.1.1:setuptools/_distutils/sysconfig.py customize_compiler (CPPFLAGS "
    "appended to the compile and link commands)"
)


def debug_map_env(ctx: Ctx) -> list[EnvSetting]:
    """The debug info of setup.py's own extensions names the tree as ``.`` (module's note)."""
    if ctx.release is not None and ctx.release.env_style == "legacy-no":
        return []
    why = (
        "setup.py compiles its own extension stubs (torch._C, _C_flatbuffer) with setuptools and "
        "the interpreter's CFLAGS (Debian's python: -g), so their DWARF names the tree's path "
        f"(measured: docs/reproducible.md); distutils appends CPPFLAGS ({DISTUTILS_CPPFLAGS}), "
        f"CMake never reads it; {TREE} is the tree, put in by the environment step"
    )
    return [EnvSetting(name="CPPFLAGS", value=f"-fdebug-prefix-map={TREE}=.", reason=why)]


NO_REPOSITORY = ("debian", "tarball")
"""Source kinds whose tree is never a git repository."""


def no_repository(ctx: Ctx) -> list[EnvSetting]:
    """``GIT_DIR=/dev/null`` for a tree that is no repository (see the module's note)."""
    kind = ctx.spec.source.split(":")[0]
    if kind not in NO_REPOSITORY:
        return []
    why = (
        f"a {kind} tree is no git repository: git must not find one the workspace lies in "
        "(torch/version.py git_version, torchvision's version.py: pytorch/pytorch@v1.13.1:"
        "tools/generate_torch_version.py get_sha, pytorch/vision@v0.21.0:setup.py); "
        "their git calls fail, giving 'Unknown', wherever the workspace is"
    )
    return [EnvSetting(name="GIT_DIR", value="/dev/null", reason=why)]


def path_warning(ctx: Ctx) -> None:
    """Without a compiler cache, objects hold the workspace path (``__FILE__``)."""
    if ctx.spec.cache.kind == "none":
        ctx.warnings.append(
            "cache.kind = none: the objects hold this workspace's path (__FILE__ in torch's "
            "checks), so a build in another workspace gives other bytes; with ccache/sccache "
            "the cache's base_dir makes those paths relative (docs/reproducible.md)"
        )


def reproducible_env(ctx: Ctx) -> list[EnvSetting]:
    """torch's build: the epoch, the archive and RPATH rules (the path note among the
    warnings)."""
    path_warning(ctx)
    return [
        source_date_epoch(ctx),
        *archive_env(ctx),
        *rpath_env(ctx),
        *debug_map_env(ctx),
        *no_repository(ctx),
    ]
