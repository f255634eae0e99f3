"""One module per sub-command; each exposes ``register(subparsers)``.

A command handler has the signature ``handler(args: argparse.Namespace) -> int`` and is stored
as ``args.handler`` by its parser. Handlers raise :class:`torchsmith.errors.TorchsmithError`;
they never print tracebacks or call ``sys.exit``.
"""

COMMAND_MODULES: tuple[str, ...] = (
    "torchsmith.commands.plan",
    "torchsmith.commands.kb",
    "torchsmith.commands.host",
    "torchsmith.commands.build",
    "torchsmith.commands.inspect",
    "torchsmith.commands.verify",
    "torchsmith.commands.doctor",
    "torchsmith.commands.source",
    "torchsmith.commands.report",
    "torchsmith.commands.matrix",
    "torchsmith.commands.publish",
    "torchsmith.commands.image",
)
