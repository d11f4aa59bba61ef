from bertdrill.cli import run

run()
