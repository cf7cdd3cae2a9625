"""The app object: its state (the folder, the token, the runs, the table open), the headers
every response carries, and :func:`serve`, which binds it to a local address with uvicorn.

Framework: Starlette (routing, forms, responses) with Jinja2 templates rendered on the server;
the only script is the app's own ``static/app.js`` (progress polling). Every asset is served by
the app from the package: no CDN, no font, nothing fetched from elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kerckhoffs.webapp.security import ASGIApp, HostGuard, Receive, Scope, Send, allowed_hosts
from kerckhoffs.webapp.state import PAGE_POLICY, AppState
from kerckhoffs.webapp.workspace import Workspace


class Headers:
    """ASGI middleware adding the security headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                names = {k.lower() for k, _ in headers}
                extra = [
                    (b"content-security-policy", PAGE_POLICY.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"cache-control", b"no-store"),
                ]
                headers += [(k, v) for k, v in extra if k not in names]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(
    folder: str | Path, *, host: str = "127.0.0.1", port: int = 8765, token: str | None = None
) -> Any:
    """The ASGI app working in ``folder``, answering requests addressed to ``host:port`` only
    (``token``: the per-process token, fresh when None)."""
    from starlette.applications import Starlette

    from kerckhoffs.webapp.routes import routes
    from kerckhoffs.webapp.security import new_token

    hosts = allowed_hosts(host, port)
    shown_host = f"[{host}]" if ":" in host else host
    state = AppState(Workspace(folder), token or new_token(), hosts, f"http://{shown_host}:{port}")
    app = Starlette(routes=routes())
    app.state.kerckhoffs = state
    return HostGuard(Headers(app), hosts)


def serve(folder: str | Path, *, host: str, port: int, announce: Any = print) -> None:
    """Serve the app on ``host:port`` until interrupted (the address already checked:
    :func:`kerckhoffs.webapp.security.check_bind`)."""
    import uvicorn

    app = create_app(folder, host=host, port=port)
    shown = f"[{host}]" if ":" in host else host
    announce(
        f"kerckhoffs app: serving {Path(folder).resolve()} on http://{shown}:{port}/ (Ctrl-C stops)"
    )
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)
