"""The pages and actions of the app. GET requests only read; every POST carries the
per-process token (:mod:`kerckhoffs.webapp.security`) and every path it names is resolved
inside the folder (:class:`~kerckhoffs.webapp.workspace.Workspace`). A library error is shown
on the page as its one line, as the command line prints it."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from kerckhoffs.errors import KerckhoffsError
from kerckhoffs.webapp import compare, workflow
from kerckhoffs.webapp.security import same_token
from kerckhoffs.webapp.state import HERE, AppState
from kerckhoffs.webapp.workspace import DATA_SUFFIXES, OutsideFolder

templates = Jinja2Templates(directory=str(HERE / "templates"))
REPORT_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"
)

Handler = Callable[[Request], Awaitable[Response]]


def _state(request: Request) -> AppState:
    return request.app.state.kerckhoffs


def _page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    st = _state(request)
    context.update(token=st.token, dataset=st.dataset, runs=st.jobs.all(), folder=st.workspace.root)
    return templates.TemplateResponse(request, name, context, status_code=status)


def _error(request: Request, message: str, status: int = 400) -> Response:
    return _page(request, "error.html", status, message=message)


def guarded(handler: Handler) -> Handler:
    """A POST handler that runs only with the token (and, when the browser names one, the
    app's own origin); a library error becomes the error page with its one line, a path
    outside the folder a 403."""

    async def run(request: Request) -> Response:
        st = _state(request)
        form = await request.form()
        origin = request.headers.get("origin")
        token = form.get("token")
        if not same_token(token if isinstance(token, str) else None, st.token) or (
            origin is not None and origin != st.origin
        ):
            return plain_403("refused: this form did not come from this app's own page")
        request.state.form = form
        try:
            return await handler(request)
        except OutsideFolder as exc:
            return _error(request, str(exc), 403)
        except KerckhoffsError as exc:
            return _error(request, str(exc))

    return run


def plain_403(text: str) -> Response:
    return Response(text, status_code=403, media_type="text/plain; charset=utf-8")


def _see(url: str) -> Response:
    return RedirectResponse(url, status_code=303)


# -- the folder ---------------------------------------------------------------------------------
async def index(request: Request) -> Response:
    ws = _state(request).workspace
    return _page(
        request,
        "index.html",
        tables=ws.files(DATA_SUFFIXES),
        schemas=ws.files((".toml",)),
    )


def _open(st: AppState, path: Any) -> None:
    ds = workflow.open_dataset(path, st.workspace.relative(path))
    st.dataset, st.schema = ds, None
    st.roles, st.kinds, st.hierarchies = {}, {}, {}
    st.schema_name, st.not_shown = None, ()


@guarded
async def open_table(request: Request) -> Response:
    st = _state(request)
    name = str(request.state.form.get("path", ""))
    path = st.workspace.existing_file(name)
    if path.suffix.lower() not in DATA_SUFFIXES:
        return _error(request, f"{name}: open a .csv or .parquet file")
    _open(st, path)
    return _see("/roles")


@guarded
async def upload(request: Request) -> Response:
    st = _state(request)
    item = request.state.form.get("file")
    if item is None or isinstance(item, str) or not item.filename:
        return _error(request, "choose a CSV or Parquet file to upload")
    path = st.workspace.new_file(item.filename)
    data = await item.read()
    with open(path, "xb") as fh:  # never replaces a file (new_file chose a free name)
        fh.write(data)
    st.workspace.remember(path)
    _open(st, path)
    return _see("/roles")


# -- roles and hierarchies ----------------------------------------------------------------------
async def roles_page(request: Request) -> Response:
    st = _state(request)
    if st.dataset is None:
        return _see("/")
    return _page(
        request,
        "roles.html",
        roles=workflow.ROLES,
        chosen=st.roles,
        kinds=st.kinds,
        hierarchies=st.hierarchies,
        hierarchy_file={
            c: st.workspace.relative(h.file.resolve())
            for c, h in st.hierarchies.items()
            if h.file is not None and h.file.resolve().is_relative_to(st.workspace.root)
        },
        schema_name=st.schema_name,
        not_shown=st.not_shown,
        builders=workflow.HIERARCHY_BUILDERS,
        builder_help=_builder_help(),
        hierarchy_files=st.workspace.files((".csv",)),
        schemas=st.workspace.files((".toml",)),
        preview=st.dataset.preview.to_dict("split"),
    )


def _builder_help() -> dict[str, str]:
    from kerckhoffs.data.hierarchy_build import BUILDERS

    return {k: v for k, v in BUILDERS.items() if k in workflow.HIERARCHY_BUILDERS}


@guarded
async def save_roles(request: Request) -> Response:
    st = _state(request)
    if st.dataset is None:
        return _see("/")
    form = request.state.form
    roles, kinds, choices = {}, {}, {}
    for i, name in enumerate(st.dataset.columns):
        roles[name] = str(form.get(f"role{i}", "other"))
        kinds[name] = str(form.get(f"kind{i}", ""))
        how = str(form.get(f"hier{i}", "auto"))
        file = None
        if how.startswith("file:"):
            file = st.workspace.existing_file(how.removeprefix("file:"))
            how = "file"
        choices[name] = workflow.HierarchyChoice(how, file, str(form.get(f"param{i}", "")))
    st.roles, st.kinds, st.hierarchies = roles, kinds, choices
    st.schema = workflow.build_schema(st.dataset, roles, kinds, choices)
    st.schema_name, st.not_shown = None, ()
    return _see("/configure")


@guarded
async def load_schema(request: Request) -> Response:
    from kerckhoffs.data.schema import Schema

    st = _state(request)
    if st.dataset is None:
        return _see("/")
    path = st.workspace.existing_file(str(request.state.form.get("path", "")))
    schema = Schema.from_toml(path)
    for column in schema.columns:  # a hierarchy file named by the schema: inside the folder
        if isinstance(column.hierarchy, str) or hasattr(column.hierarchy, "__fspath__"):
            st.workspace.existing_file(path.parent / str(column.hierarchy))
    st.schema = schema
    form = workflow.form_of(schema, path.parent)
    st.roles, st.kinds, st.hierarchies = form.roles, form.kinds, form.hierarchies
    st.schema_name, st.not_shown = st.workspace.relative(path), form.not_shown
    return _see("/configure")


# -- algorithm, run, report ---------------------------------------------------------------------
async def configure(request: Request) -> Response:
    st = _state(request)
    if st.dataset is None or st.schema is None:
        return _see("/roles" if st.dataset else "/")
    return _page(
        request, "configure.html", algorithms=workflow.algorithm_choices(), schema=st.schema
    )


@guarded
async def start_run(request: Request) -> Response:
    st = _state(request)
    if st.dataset is None or st.schema is None:
        return _see("/")
    form = request.state.form
    models = tuple(m for m in str(form.get("models", "")).replace(",", " ").split() if m)
    options = tuple(o for o in str(form.get("options", "")).split() if o)
    config = workflow.RunConfig(
        str(form.get("algorithm", "")), models, str(form.get("scheme", "")) or None, options
    )
    from kerckhoffs.api import plan

    plan(config.algorithm, scheme=config.scheme, options=config.parsed_options())
    ds, schema = st.dataset, st.schema
    job = st.jobs.start(
        config.label(),
        lambda progress: workflow.run(ds, schema, config, progress),
        {"table": ds.name},
    )
    return _see(f"/runs/{job.id}")


def _job(request: Request) -> Any:
    return _state(request).jobs.get(int(request.path_params["job"]))


async def run_page(request: Request) -> Response:
    job = _job(request)
    if job is None:
        return _error(request, "no such run", 404)
    return _page(request, "run.html", job=job, result=job.result)


async def run_status(request: Request) -> Response:
    job = _job(request)
    if job is None:
        return JSONResponse({"error": "no such run"}, status_code=404)
    return JSONResponse(job.status())


async def run_report(request: Request) -> Response:
    job = _job(request)
    if job is None or job.result is None:
        return _error(request, "no report: the run has not finished", 404)
    html = job.result.report.html()
    return HTMLResponse(html, headers={"content-security-policy": REPORT_POLICY})


@guarded
async def write_release(request: Request) -> Response:
    job = _job(request)
    if job is None or job.result is None:
        return _error(request, "no release: the run has not finished", 404)
    name = str(request.state.form.get("name", "")).strip()
    workflow.write(job.result, _state(request).workspace, name)
    return _see(f"/runs/{job.id}")


async def download(request: Request) -> Response:
    job = _job(request)
    written = {} if job is None or job.result is None else job.result.written
    what = request.path_params["what"]
    if what not in written:
        return _error(request, "nothing written yet: write the release first", 404)
    path = _state(request).workspace.resolve(_state(request).workspace.relative(written[what]))
    if what == "report":
        return Response(
            path.read_bytes(),
            media_type="text/html; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="{path.name}"'},
        )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            zf.write(file, f"{path.name}/{file.relative_to(path).as_posix()}")
    return Response(
        buf.getvalue(),
        media_type="application/zip",
        headers={"content-disposition": f'attachment; filename="{path.name}.zip"'},
    )


async def compare_page(request: Request) -> Response:
    st = _state(request)
    done = st.jobs.finished()
    numbers = [j.id for j in done]
    try:
        a = int(request.query_params.get("a", numbers[-2] if len(numbers) > 1 else 0))
        b = int(request.query_params.get("b", numbers[-1] if numbers else 0))
    except ValueError:
        return _error(request, "choose two runs by number")
    ja, jb = st.jobs.get(a), st.jobs.get(b)
    rows, svg = [], ""
    if ja is not None and jb is not None and ja.result is not None and jb.result is not None:
        rows = compare.table(ja.result, jb.result)
        svg = compare.risk_utility_svg([(j.id, j.result) for j in done], [a, b])
    return _page(request, "compare.html", done=done, a=ja, b=jb, rows=rows, svg=svg)


def routes() -> list[Any]:
    """The app's routes."""
    return [
        Route("/", index),
        Route("/open", open_table, methods=["POST"]),
        Route("/upload", upload, methods=["POST"]),
        Route("/roles", roles_page),
        Route("/roles", save_roles, methods=["POST"]),
        Route("/schema", load_schema, methods=["POST"]),
        Route("/configure", configure),
        Route("/run", start_run, methods=["POST"]),
        Route("/runs/{job:int}", run_page),
        Route("/runs/{job:int}/status", run_status),
        Route("/runs/{job:int}/report", run_report),
        Route("/runs/{job:int}/write", write_release, methods=["POST"]),
        Route("/runs/{job:int}/download/{what:str}", download),
        Route("/compare", compare_page),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
