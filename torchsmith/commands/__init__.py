"""One module per sub-command; each exposes ``register(subparsers)``.

A command handler has the signature ``handler(args: argparse.Namespace) -> int`` and is stored
as ``args.handler`` by its parser. Handlers raise :class:`torchsmith.errors.TorchsmithError`;
they never print tracebacks or call ``sys.exit``.

``COMMANDS`` names each command with its one-line help, so that ``torchsmith --help`` lists them
without importing any command module (start-up time); a unit test checks it against the help
each module registers.
"""

COMMANDS: dict[str, str] = {
    "plan": "a checked, explained build plan (nothing is built)",
    "kb": "look up the knowledge base",
    "host": "what this machine has: compilers, CUDA, GPUs, tools",
    "build": "build torch from source (a wheel, or --target only)",
    "inspect": "what a torch wheel or installation really contains",
    "verify": "check a wheel or installation against its plan",
    "doctor": "diagnose a failed build from its log, or check this machine (--env)",
    "source": "fetch a source tree, or bundle it for offline builds",
    "report": "HTML build report + Chrome trace of a workspace or manifest",
    "matrix": "a build matrix as CI files (GitHub Actions, bake)",
    "publish": "upload built artifacts (index, channel, registry)",
    "rebuild": "build a manifest's plan again and compare the wheels",
    "image": "build in a container image: Dockerfile, wheels, training images",
}

COMMAND_MODULES: tuple[str, ...] = tuple(f"torchsmith.commands.{name}" for name in COMMANDS)
