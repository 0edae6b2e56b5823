"""`python -m pipeline` is the `incidentlib` command."""

from pipeline.main import main

main()
