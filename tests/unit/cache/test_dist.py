"""Distributed compiling through sccache-dist: the client config (token inside, mode 600),
the scheduler's status and the statistics (real sccache 0.16.0 output), and the local fallback
with a warning when the cluster does not answer."""

from __future__ import annotations

import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.unit.planner.kb import ci_host
from tests.unit.private_base import private_base_fixture  # noqa: F401 (the fixture)
from tests.unit.steps.conftest import Quiet, Rig, make_plan, make_tree
from tests.unit.steps.recording import PROGRAMS, RecordingExecutor
from torchsmith.cache.dist import client_config, parse_dist_status, write_private
from torchsmith.cache.stats import parse_sccache_json
from torchsmith.errors import HostError, UsageError
from torchsmith.proc import Completed, LineCallback
from torchsmith.steps import environment, source
from torchsmith.steps.context import BuildContext, BuildOptions
from torchsmith.steps.preflight import preflight
from torchsmith.steps.state import BuildState
from torchsmith.workspace import prepare_workspace

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.usefixtures("private_base")  # sccache private dirs: not in /tmp

TOKEN = "canary-dist-token-93a1"  # a canary, not a credential
STATS = (Path(__file__).parents[2] / "fixtures" / "cache" /
         "sccache-0.16.0-stats-dist-two-compiles.json").read_text()  # fmt: skip
CLUSTER = {"cache.kind": "sccache", "cache.cluster": "http://127.0.0.1:10600",
           "cache.cluster_slots": 4, "cache.cluster_token_env": "DIST_TOKEN"}  # fmt: skip


def _fixture(fixtures: Path, name: str) -> str:
    return (fixtures / "cache" / name).read_text()


def test_status_of_a_reachable_and_an_unreachable_scheduler(fixtures: Path) -> None:
    up = parse_dist_status(_fixture(fixtures, "sccache-0.16.0-dist-status-two-servers.json"))
    assert up.reachable and (up.servers, up.cpus) == (2, 4)
    down = parse_dist_status(_fixture(fixtures, "sccache-0.16.0-dist-status-not-connected.json"))
    assert not down.reachable and "not connected" in down.detail
    assert not parse_dist_status("").reachable
    assert not parse_dist_status("sccache: error: Server startup failed").reachable


def test_compiles_sent_to_build_servers_are_counted(fixtures: Path) -> None:
    stats = parse_sccache_json(_fixture(fixtures, "sccache-0.16.0-stats-dist-two-compiles.json"))
    assert stats.dist_compiles == 2 and stats.misses == 2
    before = parse_sccache_json('{"stats": {"dist_compiles": {}}}')
    assert before.dist_compiles is None and stats.minus(before).dist_compiles == 2


def test_the_client_config_is_toml_and_private(tmp_path: Path) -> None:
    text = client_config("http://127.0.0.1:10600", tmp_path / "tc", 'tok"en\\')
    data = tomllib.loads(text)
    assert data["dist"]["scheduler_url"] == "http://127.0.0.1:10600"
    assert data["dist"]["auth"] == {"type": "token", "token": 'tok"en\\'}
    path = write_private(tmp_path / "c" / "dist-client.toml", text)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


class DistExecutor(RecordingExecutor):
    """The recording executor with sccache on PATH; ``--dist-status`` answers ``status``."""

    def __init__(self, status: str) -> None:
        super().__init__()
        self.status = status

    def which(self, program: str, env: Mapping[str, str]) -> str | None:
        return f"/usr/bin/{program}" if program in {*PROGRAMS, "sccache"} else None

    def run(self, argv: Sequence[str | Path], *, env: Mapping[str, str], cwd: Path | None = None,
            log_path: Path | None = None, on_line: LineCallback | None = None, check: bool = True,
            stdin_text: str | None = None) -> Completed:  # fmt: skip
        done = super().run(argv, env=env, cwd=cwd, log_path=log_path, check=check)
        if "--dist-status" in [str(a) for a in argv]:
            return Completed(done.argv, 0, 0.0, log_path, (self.status,))
        if "--show-stats" in [str(a) for a in argv]:
            return Completed(done.argv, 0, 0.0, log_path, (STATS,))
        return done


def _rig(tmp_path: Path, executor: DistExecutor, token: str | None) -> Rig:
    """The steps' rig (tests/unit/steps/conftest.py) with sccache on PATH."""
    plan = make_plan(make_tree(tmp_path / "user"), targets=("c10",), **CLUSTER)
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist")
    env = {**executor.environment(), **({"DIST_TOKEN": token} if token else {})}
    tools = preflight(executor, plan, env, options.cache_root)
    reporter = Quiet()
    workspace = prepare_workspace(options.cache_root, plan, tools.versions, reporter.message)
    ctx = BuildContext(plan, workspace, executor, reporter, options, ci_host())  # type: ignore[arg-type]
    return Rig(ctx, BuildState(tools=tools, base_env=env), executor, reporter, tmp_path / "user")


def _environment(tmp_path: Path, fixtures: Path, status: str) -> tuple[Rig, DistExecutor]:
    executor = DistExecutor(_fixture(fixtures, status))
    rig = _rig(tmp_path, executor, TOKEN)
    source.run_fetch(rig.ctx, rig.state)
    source.run_copy(rig.ctx, rig.state)
    environment.run(rig.ctx, rig.state)
    return rig, executor


def test_a_cluster_that_answers_is_used_with_its_slots(tmp_path: Path, fixtures: Path) -> None:
    rig, executor = _environment(tmp_path, fixtures, "sccache-0.16.0-dist-status-two-servers.json")
    benv = rig.state.need_benv()
    plan = rig.ctx.plan
    assert plan.max_jobs.value == plan.cache_setup.local_jobs + 4  # 2 cores + 4 slots
    assert benv.env["MAX_JOBS"] == str(plan.max_jobs.value)
    conf = Path(benv.env["SCCACHE_CONF"])
    assert stat.S_IMODE(conf.stat().st_mode) == 0o600 and TOKEN in conf.read_text()
    assert TOKEN not in "".join(f"{k}={v}" for k, v in benv.env.items())
    assert benv.cache.record(None)["cluster"] == "http://127.0.0.1:10600"
    assert ["/usr/bin/sccache", "--dist-status"] in executor.ran
    assert benv.env["SCCACHE_SERVER_UDS"].endswith("server-dist.sock")  # its own server


def test_an_unreachable_cluster_falls_back_to_local_jobs_with_a_warning(
    tmp_path: Path, fixtures: Path
) -> None:
    rig, executor = _environment(
        tmp_path, fixtures, "sccache-0.16.0-dist-status-not-connected.json"
    )
    benv = rig.state.need_benv()
    plan = rig.ctx.plan
    assert benv.env["MAX_JOBS"] == str(plan.cache_setup.local_jobs)
    assert "SCCACHE_CONF" not in benv.env
    assert benv.env["SCCACHE_SERVER_UDS"].endswith("/server.sock")  # not the stopped one's
    assert ["/usr/bin/sccache", "--stop-server"] in executor.ran  # it had read the config
    warning = [line for line in rig.reporter.lines if "did not answer" in line]
    assert warning and "compiling on this machine" in warning[0]
    record = benv.cache.record(None)
    assert (
        record["cluster"] == "http://127.0.0.1:10600"
        and "NotConnected" in record["cluster_fallback"]
    )


def test_a_missing_cluster_token_is_a_usage_error(tmp_path: Path) -> None:
    rig = _rig(tmp_path, DistExecutor(""), None)
    source.run_fetch(rig.ctx, rig.state)
    source.run_copy(rig.ctx, rig.state)
    with pytest.raises(UsageError, match="DIST_TOKEN"):
        environment.run(rig.ctx, rig.state)


def test_a_ccache_without_remote_storage_is_refused_before_compiling(tmp_path: Path) -> None:
    """The recording executor answers every --version with '<name> version 1.0'."""
    plan = make_plan(make_tree(tmp_path / "user"), targets=("c10",),
                     **{"cache.location": "redis://127.0.0.1:6379"})  # fmt: skip
    executor = RecordingExecutor()
    options = BuildOptions(tmp_path / "cache", tmp_path / "dist")
    env = executor.environment()
    tools = preflight(executor, plan, env, options.cache_root)
    workspace = prepare_workspace(options.cache_root, plan, tools.versions, Quiet().message)
    ctx = BuildContext(plan, workspace, executor, Quiet(), options, ci_host())  # type: ignore[arg-type]
    state = BuildState(tools=tools, base_env=env)
    source.run_fetch(ctx, state)
    source.run_copy(ctx, state)
    with pytest.raises(HostError, match=r"ccache 1\.0 does not read CCACHE_REMOTE_STORAGE"):
        environment.run(ctx, state)
    assert "cmake" not in executor.programs_run()  # nothing configured or compiled
