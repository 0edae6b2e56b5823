"""The reader's site (issue 27): `incidentlib site` builds it from cases/ (pipeline.site.build)."""
