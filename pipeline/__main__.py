"""`python -m pipeline` is the `incidentlib` command."""

from pipeline.cli import main

main()
