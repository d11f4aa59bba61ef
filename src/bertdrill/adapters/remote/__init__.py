"""The class server, seen from a learner's terminal: logging in, and the review store that speaks to it.

- :mod:`.wire`: the records of the ports as JSON, shared with the server's API (:mod:`bertdrill.web.api`);
- :mod:`.login`: the saved login (the token a login gave), read by every ``review`` and ``status``;
- :mod:`.client`: logging in and out, and :class:`~.client.ClassStore`, the
  :class:`bertdrill.ports.ReviewStore` whose every read and write is a request to the server: the learner holds
  no database credentials, and the server decides every record (:mod:`bertdrill.app.served`).

Standard library only (``http.client``): no HTTP package is a dependency of bertdrill.
"""
