"""The web page's routes, one APIRouter per area, included by pipeline.web.app.create_app:

    signin       /healthz, /login (the form and the sign-in), /logout
    queue        / (the queue), /drafts/{id}/claim and /unclaim
    drafts       /drafts/{id}, its /lacks and /save, and one route per review move (/approve, ...)
    assist       /drafts/{id}/ask and /accept, only with a model configured
    cases        /cases, /cases/{id}
    candidates   /candidates, /candidates/accept and /dismiss

No route's path may match another's (a `{parameter}` where another has a word): the order the
routers are included in decides nothing. tests/test_web_routes.py keeps it so.
"""
