from torchsmith.cli import run

run()
