"""The Debian packages a source tree needs on this machine: check, and install when asked."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence

from torchsmith.errors import HostError
from torchsmith.runner import LineCallback, Runner


def host_arch(env: Mapping[str, str], runner: Runner) -> str:
    try:
        done = runner.capture(["dpkg", "--print-architecture"], env=env)
    except FileNotFoundError as exc:
        raise HostError(
            "dpkg not found: the Debian source route needs a Debian or Ubuntu host",
            "use --source git instead",
        ) from exc
    return done.stdout.strip() or "amd64"


def parse_dpkg_query(text: str) -> set[str]:
    """Installed package names from ``dpkg-query -W -f='${Package} ${db:Status-Abbrev}\\n'``."""
    installed = set()
    for line in text.splitlines():
        name, _, status = line.partition(" ")
        if status.startswith("ii"):
            installed.add(name.split(":")[0])
    return installed


def missing_packages(packages: Sequence[str], env: Mapping[str, str], runner: Runner) -> list[str]:
    fmt = "${Package} ${db:Status-Abbrev}\n"
    done = runner.capture(["dpkg-query", "-W", f"-f={fmt}", *packages], env=env)
    installed = parse_dpkg_query(done.stdout)
    return [p for p in packages if p not in installed]


def install_command(packages: Sequence[str], as_root: bool) -> list[str]:
    sudo = [] if as_root else ["sudo"]
    return [*sudo, "apt-get", "install", "-y", "--no-install-recommends", *packages]


def ensure_packages(
    packages: Sequence[str],
    env: Mapping[str, str],
    *,
    runner: Runner,
    install: bool,
    why: str,
    on_line: LineCallback | None = None,
) -> list[str]:
    """Check ``packages``; install the missing ones with apt when ``install``, else raise a
    :class:`HostError` naming them and the command. Returns the packages installed."""
    missing = missing_packages(packages, env, runner)
    if not missing:
        return []
    argv = install_command(missing, os.geteuid() == 0)
    if not install:
        raise HostError(
            f"{why} needs {len(missing)} Debian package(s) not installed here: "
            + " ".join(missing),
            f"run `{shlex.join(argv)}`, or pass --install-deps to let torchsmith do it",
        )
    apt_env = {**env, "DEBIAN_FRONTEND": "noninteractive"}
    update = [*argv[: argv.index("apt-get") + 1], "-q", "update"]
    runner.run(update, env=apt_env, on_line=on_line)
    runner.run(argv, env=apt_env, on_line=on_line)
    return missing
