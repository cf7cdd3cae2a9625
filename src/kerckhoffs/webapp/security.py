"""What keeps a local web app local: the address it binds to, the ``Host`` header of every
request, and a per-process token on every request that changes something.

- **Bind.** Only a loopback address unless the user asks otherwise (``--allow-remote``): the
  app shows and writes data that is not yet anonymized.
- **DNS rebinding.** A page of another site can make its own name resolve to 127.0.0.1 and
  then read the app as if it were its own origin; the browser still sends that name in
  ``Host``, so a request whose ``Host`` is not the address the app is bound to is refused
  (the defence of Jupyter and of the Chromium DevTools server).
- **Cross-site requests.** A page of another site can send a form to 127.0.0.1 but cannot
  read the app's pages, so it cannot know the token every form of the app carries; a POST
  without it is refused (OWASP, "Cross-Site Request Forgery Prevention", synchronizer token).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from kerckhoffs.errors import ParameterError

LOCAL_NAMES = ("127.0.0.1", "localhost", "::1")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback interface only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> None:
    """Refuse, in one line, a non-loopback address unless ``allow_remote``."""
    if not is_loopback(host) and not allow_remote:
        raise ParameterError(
            f"--host {host}: the app binds to this machine only (127.0.0.1); it shows data "
            "that is not anonymized yet. Pass --allow-remote to serve it on another address "
            "(anyone who can reach it then sees the folder's data)"
        )


def check_port_free(host: str, port: int) -> None:
    """Refuse, in one line, an address another program already listens on (before any demo
    file is written; the server's own bind error would be a log line and exit 3)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as uvicorn binds: a port a stopped server left in TIME_WAIT is free, a listening one not
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ParameterError(
                f"--port {port}: {host}:{port} is in use or cannot be bound ({exc.strerror}); "
                "give another --port"
            ) from None


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The ``Host`` header values the app answers (None: any, for a wildcard address served
    with ``--allow-remote``, whose names the app cannot know)."""
    if host in ("0.0.0.0", "::"):
        return None
    names = {host, f"[{host}]" if ":" in host else host}
    if is_loopback(host):
        names.update(("127.0.0.1", "localhost", "[::1]"))
    hosts = {f"{n}:{port}" for n in names}
    if port == 80:
        hosts |= names
    return frozenset(hosts)


def new_token() -> str:
    """A fresh per-process token (256 bits from the operating system's secure source)."""
    return secrets.token_urlsafe(32)


def same_token(given: str | None, token: str) -> bool:
    """Constant-time comparison of a token sent with a request."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


class HostGuard:
    """ASGI middleware: a request whose ``Host`` header is not one of ``hosts`` is answered
    403 before any route runs (DNS rebinding)."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.hosts is not None:
            headers = dict(scope.get("headers") or [])
            host = headers.get(b"host", b"").decode("latin-1").lower()
            if host not in self.hosts:
                body = b"refused: this app answers only requests addressed to its local address"
                await send(
                    {
                        "type": "http.response.start",
                        "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
