"""The in-toto Statement (v1) of a wheel with a SLSA provenance (v1) predicate: the wheel as the
subject (name, sha256), the plan as the external parameters, the sources with their digests as
the resolved dependencies (https://slsa.dev/spec/v1.0/provenance)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from torchsmith import __version__
from torchsmith.attest.subject import Subject

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://github.com/torchsmith/torchsmith/build/v1"
"""torchsmith's build type: a torchsmith plan executed by ``torchsmith build``."""
BUILDER_ID = "https://github.com/torchsmith/torchsmith"


def _source_digest(source: Mapping[str, Any]) -> dict[str, str]:
    details = source.get("details", {})
    digest: dict[str, str] = {}
    if details.get("commit"):
        digest["gitCommit"] = str(details["commit"])
    for key in ("sha256", "bundle_sha256"):
        if details.get(key):
            digest["sha256"] = str(details[key])
    if not digest and source.get("identity"):
        digest["torchsmithIdentity"] = str(source["identity"])
    return digest


def resolved_dependencies(subject: Subject) -> Iterator[dict[str, Any]]:
    """The source tree, its submodules and Debian's files, each with its digest."""
    source, details = subject.source, subject.source.get("details", {})
    uri = details.get("url") or details.get("archive") or details.get("dsc")
    yield {
        "name": f"{subject.name}-source",
        **({"uri": str(uri)} if uri else {}),
        "digest": _source_digest(source),
        "annotations": {"kind": source.get("kind"), "version": source.get("version")},
    }
    for key, value in sorted(details.items()):
        if key.startswith("submodule:"):
            yield {"name": key, "digest": {"gitCommit": str(value)}}
        elif key.startswith("sha256:"):
            yield {"name": key.removeprefix("sha256:"), "digest": {"sha256": str(value)}}


def make_statement(
    subject: Subject, wheel_sha256: str, manifest: Mapping[str, Any], sbom_sha256: str
) -> dict[str, Any]:
    """The statement of ``subject``: the plan ``manifest`` records is its external parameters."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": subject.wheel.name, "digest": {"sha256": wheel_sha256}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {"plan": manifest.get("plan", {})},
                "internalParameters": {"plan_hash": manifest.get("plan_hash")},
                "resolvedDependencies": list(resolved_dependencies(subject)),
            },
            "runDetails": {
                "builder": {"id": BUILDER_ID, "version": {"torchsmith": __version__}},
                "metadata": {"invocationId": f"plan:{manifest.get('plan_hash')}"},
                "byproducts": [
                    {"name": subject.wheel.name + ".cdx.json", "digest": {"sha256": sbom_sha256}}
                ],
            },
        },
    }


def statement_bytes(statement: Mapping[str, Any]) -> bytes:
    """The statement as written (sorted keys: the same statement, the same bytes)."""
    return (json.dumps(statement, indent=1, sort_keys=True) + "\n").encode()
