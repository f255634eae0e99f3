"""scripts/refresh_commits.py: its pure parts, and the commits it wrote into the KB."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from torchsmith import kb

ROOT = Path(__file__).resolve().parents[3]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refresh_commits", ROOT / "scripts" / "refresh_commits.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("refresh_commits", module)
    spec.loader.exec_module(module)
    return module


rc = _module()
A, B = "a" * 40, "b" * 40
URL = "https://files.pythonhosted.org/packages/x/torch-9.whl"
# The version.py of torch-1.1.0-cp27-cp27m-manylinux1_x86_64.whl and of a 2.4.0 wheel, verbatim.
PY2_VERSION_PY = (
    "__version__ = '1.1.0'\ndebug = False\ncuda = '9.0.176'\n"
    "git_version = u'20607a99a31ec5405ca6aa92bc7e7bf768b7bc43'\n"
)
PY3_VERSION_PY = (
    "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', "
    "'hip']\n__version__ = '2.4.0+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\n"
    "git_version = 'e4ee3be4063b7c430974252fdf7db42273388d86'\nhip: Optional[str] = None\n"
)


def test_git_version_of_python2_and_python3_builds() -> None:
    assert rc.git_version(PY2_VERSION_PY) == "20607a99a31ec5405ca6aa92bc7e7bf768b7bc43"
    assert rc.git_version(PY3_VERSION_PY) == "e4ee3be4063b7c430974252fdf7db42273388d86"
    assert rc.git_version("__version__ = '1.0.0'\ndebug = False\n") is None


def test_canonical_url_is_pypis_file_host() -> None:
    blob = "f5/3b/" + "0" * 60 + "/torch-1.0.0-cp37-cp37m-manylinux1_x86_64.whl"
    assert rc.canonical_url("https://pypi.org/packages/packages/" + blob) == rc.FILES_HOST + blob
    assert rc.canonical_url("https://elsewhere/x.whl") == "https://elsewhere/x.whl"


def test_judge_prefers_the_tag_record_and_names_a_wheel_built_before_the_tag() -> None:
    tag = rc.TAG_COMMITS["2.4.0"]
    sha, source = rc.judge("2.4.0", [("e4ee3be4063b7c430974252fdf7db42273388d86", URL)])
    assert sha == tag
    assert source.startswith(rc.TAG_SOURCE)
    assert "e4ee3be4063b7c430974252fdf7db42273388d86" in source


def test_judge_uses_agreeing_wheels_and_cites_the_wheel() -> None:
    tag = rc.TAG_COMMITS["2.3.0"]
    assert rc.judge("2.3.0", [(tag, URL), (tag, URL)]) == (
        tag,
        f"{rc.source_text(URL)}; the tag's commit in {rc.TAG_SOURCE} agrees",
    )
    assert rc.judge("1.1.0", [(A, URL), (A, URL)]) == (A, rc.source_text(URL))


def test_judge_records_nothing_it_cannot_vouch_for() -> None:
    assert isinstance(rc.judge("1.1.0", [(A, URL), (B, URL)]), str)  # wheels disagree
    assert isinstance(rc.judge("1.0.0", [(None, URL)]), str)  # no git_version
    assert isinstance(rc.judge("2.99.0", [(A, URL)]), str)  # after 2.3.0, no tag record


TOML = """# head
schema_version = 1

[[release]]
torch = "1.1.0"
tag = "v1.1.0"
date = "2019-04-30"
[release.sources]
date = "https://pypi.org/x"

[[release]]
torch = "main"
tag = "main"
[release.sources]
"""


def test_set_commits_adds_only_commit_lines_and_is_idempotent() -> None:
    once = rc.set_commits(TOML, {"1.1.0": (A, URL)})
    assert once.count("\n") == TOML.count("\n") + 2 + rc.MARK.count("\n") + 1
    assert f'tag = "v1.1.0"\ncommit = "{A}"\ndate' in once
    assert f'[release.sources]\ncommit = "{URL}"\ndate = ' in once
    assert rc.set_commits(once, {"1.1.0": (A, URL)}) == once
    again = rc.set_commits(once, {"1.1.0": (B, URL)})
    assert A not in again and again.count(B) == 1


def test_the_kb_records_a_sourced_commit_for_every_release_it_can() -> None:
    releases = kb.load().releases
    missing = {r.torch for r in releases if not r.commit}
    # 1.0.x wheels carry no git_version; after 2.3.0 only a tag record counts, and the copied
    # spack record ends at 2.10.0; 1.8.2 (LTS) has no PyPI wheel and no spack record.
    assert missing == {"main", "1.0.0", "1.0.1", "1.8.2", "2.11.0", "2.12.0", "2.12.1", "2.13.0",
                       "2.14.0", "2.14.1", "2.15.0"}  # fmt: skip
    for rel in releases:
        if rel.commit:
            assert rel.sources["commit"].startswith((rc.FILES_HOST, rc.TAG_SOURCE))
        if rel.torch in rc.TAG_COMMITS:
            assert rel.commit == rc.TAG_COMMITS[rel.torch]
