"""The browser interface, ``bertdrill serve``: an ASGI application (Starlette, Jinja2, uvicorn).

An interface beside :mod:`bertdrill.cli`: it wires the same application code (the review session, grading,
diagnosis, the Scheduler and ReviewStore ports) into server-rendered pages that work with JavaScript off.
Nothing imports it but the CLI's ``serve`` command, inside the command (starlette is an extra, ``bertdrill[web]``).

- :mod:`.desk`: what one learner reviews with (store, cards, diagnosers, limits) and their open sittings;
- :mod:`.pages`: templates, the language and theme of a request, security headers, CSRF;
- :mod:`.review`: the review pages;
- :mod:`.app`: the application put together.
"""
