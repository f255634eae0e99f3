"""The CycloneDX JSON SBOM of one wheel (cyclonedx-python-lib, spec 1.6): the wheel as the
described component; as components its source (tag, commit, archive sha256), the git
submodules' commits, Debian's files, the torchsmith fixes applied (with hashes), the toolchain,
the CUDA toolkit's packages and library versions, the build environment's Python packages, the
libraries repair bundled and every file of the wheel with its sha256 (``torchsmith:role``
``wheel-file``: what ``verify`` compares the wheel with)."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from cyclonedx.model import HashAlgorithm, HashType, Property
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.dependency import Dependency
from cyclonedx.model.tool import ToolRepository
from cyclonedx.output.json import JsonV1Dot6
from packageurl import PackageURL

from torchsmith import __version__
from torchsmith.attest.subject import Subject

ROLE = "torchsmith:role"
WHEEL_FILE = "wheel-file"
CONTENTS = "wheel-contents"
LIBRARY = "bundled-by-repair"
BUNDLE = "repair-bundle"
_HEX64 = frozenset("0123456789abcdef")


def _sha256(value: object) -> list[HashType]:
    text = str(value or "").lower()
    ok = len(text) == 64 and set(text) <= _HEX64
    return [HashType(alg=HashAlgorithm.SHA_256, content=text)] if ok else []


def _props(role: str, **values: object) -> list[Property]:
    extra = [Property(name=f"torchsmith:{k}", value=str(v)) for k, v in values.items() if v]
    return [Property(name=ROLE, value=role), *extra]


def _component(role: str, name: str, version: str | None = None, **kw: Any) -> Component:
    kind = kw.pop("type", ComponentType.LIBRARY)
    props = kw.pop("props", {})
    ref = f"{role}:{name}"
    return Component(
        name=name,
        version=version or None,
        type=kind,
        bom_ref=ref,
        properties=_props(role, **props),
        **kw,
    )


def _archive_hash(source: Mapping[str, Any]) -> object:
    details = source.get("details", {})
    for key in ("sha256", "bundle_sha256"):
        if key in details:
            return details[key]
    origs = [v for k, v in details.items() if k.startswith("sha256:") and ".orig." in k]
    return origs[0] if origs else None


def source_components(name: str, source: Mapping[str, Any]) -> Iterator[Component]:
    """The source tree, its submodules (commits) and Debian's files (sha256)."""
    details = source.get("details", {})
    yield _component(
        "source",
        f"{name}-source",
        str(source.get("version", "")),
        hashes=_sha256(_archive_hash(source)),
        props={
            "kind": source.get("kind"),
            "identity": source.get("identity"),
            "tag": details.get("ref"),
            "commit": details.get("commit"),
            "url": details.get("url") or details.get("archive"),
            "debian-patches": details.get("patches"),
        },
    )
    for key, commit in sorted(details.items()):
        if key.startswith("submodule:"):
            path = key.removeprefix("submodule:")
            yield _component("submodule", path, commit, props={"commit": commit})
        elif key.startswith("sha256:"):
            yield _component(
                "debian-file",
                key.removeprefix("sha256:"),
                None,
                type=ComponentType.FILE,
                hashes=_sha256(commit),
            )


def fix_components(subject: Subject) -> Iterator[Component]:
    for fix in subject.fixes:
        yield _component(
            "torchsmith-fix",
            str(fix.get("id")),
            None,
            type=ComponentType.FILE,
            hashes=_sha256(fix.get("sha256")),
            props={"title": fix.get("title"), "status": fix.get("status")},
        )


def toolchain_components(subject: Subject) -> Iterator[Component]:
    for tool, said in sorted(subject.toolchain.items()):
        yield _component(
            "toolchain",
            tool,
            said.splitlines()[0] if said else None,
            type=ComponentType.APPLICATION,
        )
    for key, value in sorted(subject.library_versions.items()):
        yield _component("library-version", key, value, type=ComponentType.FRAMEWORK)
    toolkit = subject.toolkit or {}
    if toolkit.get("cuda"):
        yield _component(
            "toolkit",
            "cuda",
            str(toolkit["cuda"]),
            type=ComponentType.FRAMEWORK,
            props={"provider": toolkit.get("provider"), "origin": toolkit.get("origin")},
        )
    for pkg in toolkit.get("packages") or []:
        yield _component(
            "toolkit-package",
            str(pkg.get("name")),
            str(pkg.get("version", "")),
            hashes=_sha256(pkg.get("sha256")),
            props={"file": pkg.get("filename")},
        )


def environment_components(subject: Subject) -> Iterator[Component]:
    for pkg in subject.packages:
        yield _component(
            "build-environment",
            pkg.name,
            pkg.version,
            hashes=_sha256(pkg.sha256),
            purl=PackageURL(type="pypi", name=pkg.name.lower(), version=pkg.version or None),
            props={"hash-of": pkg.hash_of if pkg.sha256 else None},
        )


def file_components(members: Mapping[str, str]) -> Iterator[Component]:
    """Every file of the wheel, nested in one ``wheel-contents`` component; the libraries repair
    grafted (``<name>.libs/``) once more as libraries, nested in ``bundled-by-repair``. Nested:
    the library's Bom.validate is quadratic in the top-level components (minutes for torch's
    tens of thousands of files)."""
    libs = [p for p in members if p.split("/")[0].endswith(".libs")]
    nested = [_component(LIBRARY, p, None, hashes=_sha256(members[p])) for p in libs]
    files = [
        _component(WHEEL_FILE, path, None, type=ComponentType.FILE, hashes=_sha256(digest))
        for path, digest in members.items()
    ]
    yield _component(CONTENTS, "wheel", None, type=ComponentType.FILE, components=files)
    if nested:
        yield _component(BUNDLE, "repair", None, components=nested)


def _metadata(subject: Subject, wheel_sha256: str, when: datetime.datetime) -> BomMetaData:
    wheel = Component(
        name=subject.name,
        version=subject.version,
        bom_ref="wheel",
        purl=PackageURL(type="pypi", name=subject.name, version=subject.version),
        hashes=_sha256(wheel_sha256),
        properties=[Property(name="torchsmith:wheel", value=subject.wheel.name)],
    )
    tool = Component(name="torchsmith", version=__version__, type=ComponentType.APPLICATION)
    return BomMetaData(component=wheel, tools=ToolRepository(components=[tool]), timestamp=when)


def make_sbom(
    subject: Subject, members: Mapping[str, str], wheel_sha256: str, when: datetime.datetime
) -> str:
    """The SBOM's JSON text. Its serial number follows from the wheel's hash and its time is
    ``when`` (the build's), so the same wheel gets the same SBOM."""
    parts = [
        *source_components(subject.name, subject.source),
        *fix_components(subject),
        *toolchain_components(subject),
        *environment_components(subject),
        *file_components(members),
    ]
    metadata = _metadata(subject, wheel_sha256, when)
    root = metadata.component
    assert root is not None
    bom = Bom(
        metadata=metadata,
        components=parts,
        serial_number=uuid.uuid5(uuid.NAMESPACE_URL, f"torchsmith:wheel:{wheel_sha256}"),
        # built directly: Bom.register_dependency is quadratic (minutes for torch's files)
        dependencies=[
            Dependency(ref=root.bom_ref, dependencies=[Dependency(ref=c.bom_ref) for c in parts])
        ],
    )
    return str(JsonV1Dot6(bom).output_as_string(indent=1))


def wheel_files(sbom: Mapping[str, Any]) -> dict[str, str]:
    """The wheel's files and sha256s an SBOM records (its ``wheel-file`` components)."""
    found: dict[str, str] = {}
    for comp in all_components(sbom):
        if role_of(comp) == WHEEL_FILE:
            hashes = {h.get("alg"): h.get("content") for h in comp.get("hashes", [])}
            found[str(comp.get("name"))] = str(hashes.get("SHA-256", ""))
    return found


def role_of(comp: Mapping[str, Any]) -> str | None:
    props = {p.get("name"): p.get("value") for p in comp.get("properties", [])}
    role = props.get(ROLE)
    return str(role) if role is not None else None


def all_components(sbom: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every component of the SBOM's JSON, nested ones included."""
    stack = list(sbom.get("components", []))
    while stack:
        comp = stack.pop()
        yield comp
        stack.extend(comp.get("components", []))
