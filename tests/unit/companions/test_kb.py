"""The knowledge base's Debian source records of torch and its companions (issue 11)."""

from __future__ import annotations

from collections import defaultdict

from torchsmith import kb as kbmod


def _hashes() -> dict[str, list[str]]:
    """Every sha256 a KB source record pins, with the records that pin it."""
    seen: dict[str, list[str]] = defaultdict(list)
    for pkg in kbmod.load().debian_packages:
        for field, value in pkg.model_dump().items():
            if field.endswith("sha256") and value:
                seen[value].append(f"{pkg.package} {pkg.version} {field}")
    return seen


def test_no_two_kb_source_records_share_a_hash() -> None:
    shared = {sha: who for sha, who in _hashes().items() if len(who) > 1}
    assert shared == {}


def test_pytorch_audio_260_dsc_hash_is_the_one_trixies_sources_index_lists() -> None:
    pkg = kbmod.load().debian_package("pytorch-audio", "2.6.0")
    # `apt-get source --print-uris pytorch-audio=2.6.0-1` against trixie's signed index
    assert pkg.dsc_sha256 == "96e7c2ce22640ea22d6e62eb44b283a4e7804d9621363ee84e81983659fb44c3"


def test_every_companion_package_records_its_dsc_hash() -> None:
    companions = [p for p in kbmod.load().debian_packages if p.package != "pytorch"]
    assert companions
    assert all(p.dsc_sha256 for p in companions), [p.version for p in companions]
