"""The knowledge base: versioned data files inside the package, loaded once, validated at load.

``load()`` reads every ``kb/data/*.toml`` file; a malformed record or a fact without a source
raises :class:`KnowledgeBaseError` naming the file and record. Lookups that find nothing raise
:class:`UnknownEntryError` with the closest known names.

Start-up: ``load()`` builds the records (frozen dataclasses, :mod:`torchsmith.kb.models`) from
the precompiled form (``kb/data/compiled.json``) with no pydantic at all; the schema
(:mod:`torchsmith.kb.schema`, pydantic) validates every record when compiled.json is written and
whenever it is stale (then the TOML files are read and validated here), and a unit test checks
that both give the same records. :func:`torchsmith.kb.view.load_view` reads compiled.json for
``torchsmith kb`` without the fixes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from torchsmith.errors import KnowledgeBaseError, UnknownEntryError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from torchsmith.kb.models import (
        ArchParser,
        ArchSuffix,
        BuildOption,
        CudaRelease,
        DebianPackage,
        Fix,
        Gpu,
        OfficialArchList,
        Release,
    )

SCHEMA_VERSION = 1
M = TypeVar("M", bound="BaseModel")
R = TypeVar("R")
# table name in the data files -> its record's name in torchsmith.kb.models and .schema
TABLES: dict[str, str] = {
    "release": "Release",
    "cuda": "CudaRelease",
    "arch_list": "OfficialArchList",
    "gpu": "Gpu",
    "option": "BuildOption",
    "fix": "Fix",
    "debian": "DebianPackage",
    "arch_suffix": "ArchSuffix",
    "arch_parser": "ArchParser",
}


def model_of(table: str) -> type[BaseModel]:
    """The schema of ``table``'s records (imports pydantic and builds the models)."""
    from torchsmith.kb import schema

    model: type[BaseModel] = getattr(schema, TABLES[table])
    return model


def record_of(table: str) -> type[Any]:
    """The read-path record class of ``table`` (a frozen dataclass)."""
    from torchsmith.kb import models

    record: type[Any] = getattr(models, TABLES[table])
    return record


def normalize_gpu_name(name: str) -> str:
    """'NVIDIA GeForce RTX 4090' and 'rtx4090' compare equal."""
    text = name.lower().replace("nvidia", "").replace("geforce", "")
    return re.sub(r"[^a-z0-9]", "", text)


def _close(wanted: str, known: list[str]) -> list[str]:
    """Up to three names like ``wanted`` (difflib imported only for a lookup that failed)."""
    import difflib

    return difflib.get_close_matches(wanted, known, n=3, cutoff=0.5)


def version_key(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


@dataclass(frozen=True)
class KnowledgeBase:
    releases: tuple[Release, ...]
    cuda_releases: tuple[CudaRelease, ...]
    arch_lists: tuple[OfficialArchList, ...]
    gpus: tuple[Gpu, ...]
    options: tuple[BuildOption, ...]
    fixes: tuple[Fix, ...]
    debian_packages: tuple[DebianPackage, ...] = ()
    arch_suffixes: tuple[ArchSuffix, ...] = ()
    arch_parsers: tuple[ArchParser, ...] = ()

    # -- releases -------------------------------------------------------------------------
    def release(self, version: str) -> Release:
        wanted = version.strip().lstrip("v")
        for rel in self.releases:
            if rel.torch == wanted:
                return rel
        known = [r.torch for r in self.releases]
        close = _close(wanted, known)
        raise UnknownEntryError(
            f"torch {version!r} is not a release the knowledge base knows",
            (f"did you mean {', '.join(close)}? " if close else "")
            + f"known: {known[0]} … {self.newest_release().torch} and main; "
            "`torchsmith kb releases` lists them",
        )

    def newest_release(self) -> Release:
        numbered = [r for r in self.releases if r.torch != "main"]
        return max(numbered, key=lambda r: version_key(r.torch))

    # -- CUDA -----------------------------------------------------------------------------
    def cuda(self, version: str) -> CudaRelease:
        for rel in self.cuda_releases:
            if rel.version == version:
                return rel
        known = [c.version for c in self.cuda_releases]
        raise UnknownEntryError(
            f"CUDA {version!r} is not a CUDA release the knowledge base knows",
            f"known CUDA versions: {', '.join(known)}",
        )

    def official_arch_list(self, torch: str, cuda: str) -> OfficialArchList | None:
        tv = version_key(torch)
        for entry in self.arch_lists:
            if entry.cuda == cuda and tv in SpecifierSet(entry.torch):
                return entry
        return None

    def release_arch_lists(self, torch: str) -> list[OfficialArchList]:
        """Every official arch list of one release (one per CUDA variant)."""
        tv = version_key(torch)
        return [e for e in self.arch_lists if tv in SpecifierSet(e.torch)]

    def arch_suffix(self, suffix: str) -> ArchSuffix | None:
        return next((a for a in self.arch_suffixes if a.suffix == suffix), None)

    def arch_parser(self, torch: str) -> ArchParser | None:
        """What release ``torch`` accepts as GPU targets (``main``: the newest release's)."""
        wanted = self.newest_release().torch if torch == "main" else torch
        tv = version_key(wanted)
        return next((p for p in self.arch_parsers if tv in SpecifierSet(p.torch)), None)

    # -- GPUs -----------------------------------------------------------------------------
    def gpu(self, name: str) -> Gpu:
        wanted = normalize_gpu_name(name)
        for gpu in self.gpus:
            if wanted in {normalize_gpu_name(n) for n in (gpu.name, *gpu.aliases)}:
                return gpu
        names = [g.name for g in self.gpus]
        close = _close(name, names)
        raise UnknownEntryError(
            f"GPU {name!r} is not in the knowledge base",
            (f"did you mean {', '.join(close)}? " if close else "")
            + "or give its compute capability directly, e.g. --gpu 8.6",
        )

    def compute_capability(self, cc: str) -> tuple[list[Gpu], list[str]]:
        """The GPUs of compute capability ``cc`` ('8.6') and the CUDA versions that compile it;
        :class:`UnknownEntryError` when the knowledge base knows neither."""
        wanted = cc.strip().removesuffix("+PTX").removeprefix("sm_")
        if re.fullmatch(r"\d{2,3}", wanted):
            wanted = f"{wanted[:-1]}.{wanted[-1]}"
        gpus = [g for g in self.gpus if g.compute_capability == wanted]
        cudas = [c.version for c in self.cuda_releases if wanted in c.archs]
        if not gpus and not cudas:
            known = sorted({g.compute_capability for g in self.gpus}, key=version_key)
            raise UnknownEntryError(
                f"compute capability {cc!r} is not one the knowledge base knows",
                f"known compute capabilities: {', '.join(known)}",
            )
        return gpus, cudas

    def debian_package(self, package: str, upstream: str) -> DebianPackage:
        for pkg in self.debian_packages:
            if pkg.package == package and pkg.upstream == upstream:
                return pkg
        known = [f"{p.package} {p.upstream}" for p in self.debian_packages if p.package == package]
        raise UnknownEntryError(
            f"Debian has no source package {package!r} of version {upstream} known to torchsmith",
            f"Debian packages known: {', '.join(known) or 'none'}; use --source git instead",
        )

    # -- options and fixes ----------------------------------------------------------------
    def option(self, name: str) -> BuildOption:
        for opt in self.options:
            if opt.name == name:
                return opt
        raise UnknownEntryError(f"build option {name!r} is not in the knowledge base")

    def options_for_feature(self, feature: str) -> list[BuildOption]:
        return [o for o in self.options if o.feature == feature]


COMPILED_NAME = "compiled.json"
# The package's own data directory (a plain directory: importlib.resources would cost start-up
# time for nothing, torchsmith is never imported from a zip).
DATA_DIR = Path(__file__).parent / "data"
Records = dict[str, list[tuple[str, dict[str, Any]]]]


def _data_files() -> list[Path]:
    return sorted((e for e in DATA_DIR.iterdir() if e.name.endswith(".toml")), key=lambda e: e.name)


def data_hash() -> str:
    """sha256 over the names and bytes of every data file."""
    digest = hashlib.sha256()
    for entry in _data_files():
        digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    return digest.hexdigest()


def compile_records() -> str:
    """The parsed data files as JSON (``kb/data/compiled.json``, written by
    ``scripts/compile_kb.py``): loading it skips the pure-Python TOML parser."""
    payload: dict[str, Any] = {
        "generated_by": "scripts/compile_kb.py — do not edit",
        "hash": data_hash(),
        "records": _parse_toml_files(),
        "defaults": {table: _defaults(model_of(table)) for table in TABLES},
    }
    return json.dumps(payload, sort_keys=True, separators=(",", ":")) + "\n"


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Each optional field's default (for records read without the models: kb/view.py)."""
    return {
        name: field.get_default(call_default_factory=True)
        for name, field in model.model_fields.items()
        if not field.is_required()
    }


def compiled_defaults() -> dict[str, dict[str, Any]] | None:
    """The defaults compiled.json records per table (None when it is missing or stale)."""
    payload = _payload()
    return None if payload is None else payload.get("defaults")


@functools.cache
def _payload() -> dict[str, Any] | None:
    """compiled.json, or None when it is missing, unreadable or stale."""
    try:
        payload: dict[str, Any] = json.loads((DATA_DIR / COMPILED_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if payload.get("hash") != data_hash():
        return None  # stale: a data file changed since it was compiled
    return payload


def _compiled() -> Records | None:
    payload = _payload()
    if payload is None:
        return None
    return {k: [(f, r) for f, r in rows] for k, rows in payload["records"].items()}


@functools.cache
def _compiled_current() -> Records | None:
    return _compiled()


@functools.cache
def _read_all() -> Records:
    """Every record of every data file, grouped by table; each file is parsed once."""
    return _compiled_current() or _parse_toml_files()


def _toml() -> Any:
    """The TOML parser, imported only when the TOML files are read (compiled.json stale or
    being written): start-up time."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def _parse_toml_files() -> Records:
    tomllib = _toml()
    merged: Records = {}
    for entry in _data_files():
        try:
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise KnowledgeBaseError(f"kb/data/{entry.name} is not valid TOML: {exc}") from exc
        if data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
            raise KnowledgeBaseError(f"kb/data/{entry.name}: unsupported schema_version")
        for key, rows in data.items():
            if key in TABLES:
                merged.setdefault(key, []).extend((entry.name, row) for row in rows)
    return merged


def _read_table(name: str) -> list[tuple[str, dict[str, Any]]]:
    return _read_all().get(name, [])


def _construct(record: type[R], row: dict[str, Any]) -> R:
    """The record of a row that the schema validated (in compiled.json, or just now): plain
    construction, nested records of a fix included."""
    from torchsmith.kb.models import Fix, FixApplies, PatchEdit

    if record is Fix:
        row = {**row, "applies": FixApplies(**row.get("applies", {})),
               "edits": [PatchEdit(**e) for e in row.get("edits", [])]}  # fmt: skip
    return record(**row)


def _parse(table: str, record: type[R]) -> tuple[R, ...]:
    if _compiled_current():
        return tuple(_construct(record, row) for _, row in _read_table(table))
    return tuple(_construct(record, v.model_dump()) for v in validate(table, model_of(table)))


def validate(table: str, model: type[M]) -> tuple[M, ...]:
    """Every record of ``table`` validated by ``model``; a bad one is a KnowledgeBaseError."""
    from pydantic import ValidationError

    records = []
    for filename, row in _read_table(table):
        try:
            records.append(model.model_validate(row))
        except ValidationError as exc:
            ident = row.get("torch") or row.get("name") or row.get("id") or row.get("version")
            raise KnowledgeBaseError(
                f"kb/data/{filename}: bad [[{table}]] record {ident!r}:\n{exc}",
                "fix the data file; every fact needs a source",
            ) from exc
    return tuple(records)


def _check_specifiers(kb: KnowledgeBase) -> None:
    specs: Iterable[tuple[str, str]] = [(a.torch, f"arch_list {a.cuda}") for a in kb.arch_lists]
    specs = [*specs, *((p.torch, "arch_parser") for p in kb.arch_parsers)]
    for fix in kb.fixes:
        a = fix.applies
        specs += [(s, f"fix {fix.id}") for s in (a.torch, a.cuda, a.gcc, a.python) if s]
    for text, where in specs:
        try:
            SpecifierSet(text)
        except InvalidSpecifier as exc:
            raise KnowledgeBaseError(f"{where}: {text!r} is not a version specifier") from exc


@functools.cache
def load() -> KnowledgeBase:
    """The knowledge base, read and validated once per process."""
    from torchsmith.kb.facts import render_fix
    from torchsmith.kb.models import (
        ArchParser,
        ArchSuffix,
        BuildOption,
        CudaRelease,
        DebianPackage,
        Fix,
        Gpu,
        OfficialArchList,
        Release,
    )

    cudas = _parse("cuda", CudaRelease)
    kb = KnowledgeBase(
        releases=_parse("release", Release),
        cuda_releases=cudas,
        arch_lists=_parse("arch_list", OfficialArchList),
        gpus=_parse("gpu", Gpu),
        options=_parse("option", BuildOption),
        fixes=tuple(render_fix(f, cudas) for f in _parse("fix", Fix)),
        debian_packages=_parse("debian", DebianPackage),
        arch_suffixes=_parse("arch_suffix", ArchSuffix),
        arch_parsers=_parse("arch_parser", ArchParser),
    )
    _check_specifiers(kb)
    return kb
