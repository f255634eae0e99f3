"""The generated Dockerfile's base stage for a recipe (:mod:`.recipes`): ``FROM`` the OS image,
the repository with its key checked by fingerprint (NVIDIA's) or the image's own archive keyring
(Debian's), the packages, and the CUDA measured inside the stage. Also the check of a base image
the user names (``--base-image``): its CUDA measured inside it (``nvcc --version``, or the cudart
soname of a runtime image) against the plan's. Every value through :func:`layers.quote`."""

from __future__ import annotations

from torchsmith.container.layers import comment, quote, run_layer
from torchsmith.container.recipes import AptSource, Recipe

STAGE = "cuda"
"""The recipe stage's name: the build and training stages start ``FROM cuda``."""
KEYRINGS = "/usr/share/keyrings"
LIST = "/etc/apt/sources.list.d/torchsmith-cuda.list"
# Debian trixie's debian-archive-keyring ships the .pgp name, bookworm's the .gpg one.
DEBIAN_KEY = (
    f'key={KEYRINGS}/debian-archive-keyring.pgp; [ -e "$key" ] '
    f"|| key={KEYRINGS}/debian-archive-keyring.gpg"
)
TOOLS = ("ca-certificates", "curl", "gnupg")
DEB822 = "s/^Components: main$/Components: main contrib non-free/"
ONE_LINE = r"s/^(deb [^ ]+ [a-z-]+) main$/\1 main contrib non-free/"


def keyed_source(
    source: AptSource, index: int, keyrings: str = KEYRINGS, listfile: str = LIST, tmp: str = "/tmp"
) -> list[str]:
    """Fetch the key, check its fingerprint, write the entry signed by it alone (the paths
    are parameters for the integration test, which runs these commands with real gpg and apt)."""
    assert source.key_url is not None and source.fingerprint is not None
    armored, check = f"{tmp}/cuda-key-{index}.asc", f"{tmp}/cuda-check-{index}.gpg"
    keyring = f"{keyrings}/torchsmith-cuda-{index}.gpg"
    gpg = f"gpg --batch --no-default-keyring --keyring {check}"
    fpr = quote(f"fpr:::::::::{source.fingerprint}:")
    wrong = quote(f"torchsmith: the key at {source.key_url} is not {source.fingerprint}")
    line = quote(f"deb [signed-by={keyring}] {source.url} {source.dist}")
    return [
        f"curl -fsSL {quote(source.key_url)} -o {armored}",
        f"{gpg} --import {armored}",
        f"{{ {gpg} --with-colons --fingerprint | grep -qF {fpr} "
        f"|| {{ echo {wrong} >&2; exit 1; }}; }}",
        f"gpg --batch --dearmor -o {keyring} {armored}",
        f"echo {line} >> {listfile}",
    ]


def _debian(source: AptSource, mirrored: bool) -> list[str]:
    """The image's own Debian entries with contrib and non-free added (a second entry for the
    same suite with another Signed-By is an apt error), or, with a mirror, only the mirror."""
    if not mirrored:
        sources, one_line = "/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"
        return [
            f"if [ -e {sources} ]; then sed -i {quote(DEB822)} {sources}; fi",
            f"if [ -e {one_line} ]; then sed -i -E {quote(ONE_LINE)} {one_line}; fi",
        ]
    entry = f'echo "deb [signed-by=$key]" {quote(source.url)} {quote(source.dist)} > {LIST}'
    return [DEBIAN_KEY, "rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*", entry]


def nvcc_check(cuda: str, what: str) -> list[str]:
    """The CUDA inside, measured: ``nvcc --version`` must say ``release X.Y,``."""
    wanted = quote(f"release {cuda},")
    wrong = quote(f"torchsmith: {what} is not CUDA {cuda} (nvcc --version below)")
    nvcc = 'nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"'
    return [
        nvcc,
        f'{{ "$nvcc" --version | grep -qF {wanted} '
        f'|| {{ echo {wrong} >&2; "$nvcc" --version >&2; exit 1; }}; }}',
    ]


def cudart_soname(cuda: str) -> str:
    """``libcudart.so.9.0``, ``libcudart.so.11.0`` (every 11.x), ``libcudart.so.12``."""
    major = int(cuda.split(".", maxsplit=1)[0])
    if major == 11:
        return "libcudart.so.11.0"
    return f"libcudart.so.{major}" if major >= 12 else f"libcudart.so.{cuda}"


def soname_check(cuda: str, what: str) -> list[str]:
    """A runtime image (no nvcc): the CUDA runtime's soname among its libraries."""
    soname = quote(cudart_soname(cuda))
    wrong = quote(f"torchsmith: {what} has no {cudart_soname(cuda)} (CUDA {cuda})")
    dirs = "/usr/local/cuda/lib64 /usr/local/cuda/targets/*/lib"
    libs = f"{{ ldconfig -p; ls {dirs} 2>/dev/null || true; }}"  # pipefail: a missing dir
    return [f"{{ {libs} | grep -qF {soname} || {{ echo {wrong} >&2; exit 1; }}; }}"]


def recipe_stage(recipe: Recipe) -> list[str]:
    """``FROM ${BASE_IMAGE} AS cuda``: the OS image made a CUDA image."""
    commands = ["apt-get update", f"apt-get install -y --no-install-recommends {' '.join(TOOLS)}"]
    if recipe.kind == "debian":
        commands += _debian(recipe.sources[0], recipe.mirrored)
    else:
        for index, source in enumerate(recipe.sources):
            commands += keyed_source(source, index)
    names = " ".join(quote(p) for p in recipe.packages)
    commands += ["apt-get update", f"apt-get install -y --no-install-recommends {names}"]
    if recipe.kind == "nvidia":
        commands.append(f"ln -sfn {quote(recipe.root)} /usr/local/cuda")
    commands.append("rm -rf /var/lib/apt/lists/* /tmp/cuda-*")
    lines = [comment(f"the base: {recipe.summary()}"), comment(recipe.reason)]
    lines += [f"FROM ${{BASE_IMAGE}} AS {STAGE}", 'SHELL ["/bin/bash", "-o", "pipefail", "-c"]']
    lines += ["ARG DEBIAN_FRONTEND=noninteractive", *run_layer(*commands, ignore="DL3008")]
    if recipe.kind == "nvidia":
        lines += ["ENV PATH=/usr/local/cuda/bin:$PATH"]
    lines += ["# its CUDA, measured inside it", *run_layer(*nvcc_check(recipe.cuda, "the recipe"))]
    return [*lines, ""]
