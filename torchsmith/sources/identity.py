"""Check a fetched tree's identity against the knowledge base, where the KB knows it."""

from __future__ import annotations

from torchsmith.errors import SourceError, UnknownEntryError
from torchsmith.kb import KnowledgeBase
from torchsmith.sources.base import SourceTree


def expected_identity(tree: SourceTree, kb: KnowledgeBase) -> tuple[str, str] | None:
    """(what, expected value) the KB records for this tree, or None when it records nothing."""
    try:
        if tree.kind == "debian":
            pkg = kb.debian_package(tree.details.get("package", "pytorch"), tree.version)
            name = f"{pkg.package}_{pkg.version.split(':')[-1]}.dsc"
            return (f"sha256:{name}", pkg.dsc_sha256) if pkg.dsc_sha256 else None
        if tree.kind == "git":
            commit = kb.release(tree.version).commit
            return ("commit", commit) if commit else None
    except UnknownEntryError:
        return None
    return None


def check_identity(tree: SourceTree, kb: KnowledgeBase) -> str:
    """'checked' / 'unknown to the KB'; raises SourceError on a mismatch. A bundle's original
    source was checked by the bundle provider itself (``bundle_identity``)."""
    if tree.kind == "bundle" and "bundle_identity" in tree.details:
        return tree.details["bundle_identity"]
    expected = expected_identity(tree, kb)
    if expected is None:
        return "not recorded in the knowledge base"
    key, value = expected
    actual = tree.identity if key == "commit" else tree.details.get(key)
    if actual != value:
        raise SourceError(
            f"the fetched {tree.kind} source of {tree.version} is not the one the knowledge base "
            f"records: {key} is {actual}, expected {value}",
            "the archive or tag changed (or a mirror serves other files): check the mirror, "
            "or refresh the knowledge base if the change is legitimate",
        )
    return f"matches the knowledge base ({key})"
