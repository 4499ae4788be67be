"""Safe by default: loopback only unless a token guards the pages; strict response headers.

Everything from the log is hostile input (task names, scripts, model answers): the pages escape
it where they render it, and the Content-Security-Policy below is the second wall — scripts come
only from this server's own /static/ui.js, never from the page's HTML, so text that slipped
through unescaped still could not run.
"""

from __future__ import annotations

import hmac
import ipaddress
import urllib.parse

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_COOKIE = "engine_ui_token"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
                                "frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class BindRefused(Exception):
    """The address would expose the runs without a token; the message says what to do."""


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Loopback needs nothing; any other address (0.0.0.0 included) needs a token."""
    if is_loopback(host):
        return
    if not token:
        raise BindRefused(
            f"refusing to listen on {host} without a token: anyone who can reach that address could read "
            "every run (task data, scripts, model answers). Pass --token SECRET (or set ENGINE_UI_TOKEN) "
            "and open the printed URL, or keep the default 127.0.0.1 and reach it through an SSH tunnel.")
    if len(token) < 16:
        raise BindRefused("the token must be at least 16 characters (for example: python -c "
                          "'import secrets; print(secrets.token_urlsafe(24))')")


class AccessGuard:
    """ASGI middleware: the token check (when one is set), the Host check on loopback (a page on
    another site cannot reach this server through DNS rebinding) and the security headers."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        self.app = app
        self.token = token
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = self._refusal(request)
        if refused is not None:
            await refused(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", [])]
                headers += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)

    def _refusal(self, request: Request) -> Response | None:
        if self.loopback and not is_loopback(_host_name(request.headers.get("host", ""))):
            return _plain("this server answers only to localhost addresses", 403)
        if not self.token:
            return None
        given = request.query_params.get("token")
        if given is not None:
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return _plain("wrong token", 401)
            # Swap the token in the URL for a cookie, so it leaves the address bar and the history.
            clean = _without_token(request.url)
            response = RedirectResponse(clean, status_code=303)
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="strict")
            return response
        sent = request.cookies.get(TOKEN_COOKIE) or _bearer(request.headers.get("authorization", ""))
        if sent and hmac.compare_digest(sent.encode(), self.token.encode()):
            return None
        return _plain("this server needs its token: open the URL `engine ui` printed (it ends in ?token=…)", 401)


def _plain(text: str, status: int) -> Response:
    return PlainTextResponse(text, status_code=status, headers=HEADERS)


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _bearer(value: str) -> str:
    scheme, _, credential = value.partition(" ")
    return credential.strip() if scheme.lower() == "bearer" else ""


def _without_token(url: URL) -> str:
    query = [(k, v) for k, v in urllib.parse.parse_qsl(url.query, keep_blank_values=True) if k != "token"]
    return url.path + (f"?{urllib.parse.urlencode(query)}" if query else "")
