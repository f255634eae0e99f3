"""A signing key never goes into a container: a container build (build --backend docker,
torchsmith image) with sign_key is refused at plan time, naming the way out."""

from __future__ import annotations

from pathlib import Path

from tests.unit.attest.helpers import key_pair
from torchsmith.container import inside, routes
from torchsmith.container.planning import local_spec
from torchsmith.spec_sources import resolve_spec


def test_a_container_build_with_a_signing_key_is_refused(tmp_path: Path) -> None:
    key = key_pair(tmp_path)[0]
    rs = resolve_spec(cli={"torch": "2.6.0", "backend": "docker", "sign_key": str(key)})
    [problem] = [p for p in inside.refusals(rs.spec, None) if p.field == "sign_key"]
    assert "never copied or mounted into a container" in problem.what
    assert "--backend local" in problem.fix
    assert [p.field for p in routes.dockerfile_refusals(rs)] == ["sign_key"]
    assert local_spec(rs).spec.sign_key is None  # the torchsmith inside is never told it
