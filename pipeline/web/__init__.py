"""The reviewer's web page (`incidentlib web`): see pipeline.web.app."""

from pipeline.web.app import SESSION_COOKIE, create_app

__all__ = ["SESSION_COOKIE", "create_app"]
