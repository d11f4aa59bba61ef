"""A browser without a browser, for the web tests: Starlette's TestClient plus the forms of the last page.

``Browser.submit(action, **fields)`` posts the form with that action as a browser would: its hidden fields
(the CSRF token, the card id) plus the fields given, following the redirect to the next page.
"""

from __future__ import annotations

import warnings
from html.parser import HTMLParser

with warnings.catch_warnings():  # starlette 1.x would rather have httpx2; httpx is what PyPI's test clients use
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

LOCAL = "http://127.0.0.1:8000"


class Forms(HTMLParser):
    """Each form's action and its hidden inputs; the page's text in <main>, tags dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: dict[str, dict[str, str]] = {}
        self._action: str | None = None

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if tag == "form":
            self._action = found.get("action") or ""
            self.forms.setdefault(self._action, {})
        elif tag == "input" and self._action is not None and found.get("type") == "hidden":
            self.forms[self._action][found.get("name") or ""] = found.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self._action = None


class Browser:
    def __init__(self, app, base_url: str = LOCAL, **headers: str):
        self.client = TestClient(app, base_url=base_url, headers=headers, raise_server_exceptions=True)
        self.page = ""
        self.status = 0

    def get(self, path: str) -> str:
        response = self.client.get(path)
        self.page, self.status = response.text, response.status_code
        return self.page

    def forms(self) -> dict[str, dict[str, str]]:
        parser = Forms()
        parser.feed(self.page)
        return parser.forms

    def submit(self, action: str, **fields: str) -> str:
        data = {**self.forms()[action], **fields}
        response = self.client.post(action, data=data)
        self.page, self.status = response.text, response.status_code
        return self.page

    def close(self) -> None:
        self.client.close()
