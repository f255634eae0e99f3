"""What makes two builds of one plan give the same bytes, whatever the workspace path, the
compiler cache's state or the clock (issue 29): decisions of the plan, each with its reason.

* ``SOURCE_DATE_EPOCH`` (https://reproducible-builds.org/specs/source-date-epoch/): the
  release's date as the knowledge base records it (``kb/data/releases.toml`` ``date``, with its
  source), midnight UTC. setuptools' ``bdist_wheel`` (pypa/wheel@0.48.0:src/wheel/wheelfile.py
  ``get_zipinfo_datetime``) and auditwheel's re-zip read it; torchsmith's own normalisation of
  the final wheel (:mod:`torchsmith.packaging.wheel_normal`) stamps every member with it.
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
"""

from __future__ import annotations

import datetime as dt

from torchsmith.kb.models import Release
from torchsmith.plan_model import EnvSetting
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


def _epoch_reason(why: str) -> str:
    return (
        f"{why}, midnight UTC: every time the build writes (wheel members, archives) is this "
        f"one, never the clock, for torch and the companions of this plan ({SPEC})"
    )


def source_date_epoch(ctx: Ctx) -> EnvSetting:
    """The release's date: torch's own build, and the companions built in or against this
    plan (the KB pairs each companion release with a torch release: one date for both)."""
    epoch, why = release_date(ctx.release)
    return EnvSetting(name="SOURCE_DATE_EPOCH", value=str(epoch), reason=_epoch_reason(why))


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
    """torch's build: the epoch and the archive rules (the path note among the warnings)."""
    path_warning(ctx)
    return [source_date_epoch(ctx), *archive_env(ctx), *no_repository(ctx)]
