"""``kerckhoffs app [FOLDER]``: serve the local web app on this machine
(:mod:`kerckhoffs.webapp`); ``--demo`` first puts the generated hospital table, its schema and
its hierarchies into the folder (only the files that are not there yet)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kerckhoffs.cli.output import err
from kerckhoffs.errors import InputError, ParameterError


def app(
    folder: Annotated[
        Path, typer.Argument(help="The folder the app reads and writes in (nothing outside it).")
    ] = Path("."),
    port: Annotated[
        int, typer.Option("--port", help="The port to serve on.", min=0, max=65535)
    ] = 8765,
    host: Annotated[
        str, typer.Option("--host", help="The address to bind (this machine only by default).")
    ] = "127.0.0.1",
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow an address other than this machine's: anyone who reaches it sees the "
            "folder's data.",
        ),
    ] = False,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Create FOLDER if needed and put the demo hospital table (2,000 generated "
            "rows), its schema and hierarchies into it.",
        ),
    ] = False,
) -> None:
    """Start the local web app: open a table, assign roles, build hierarchies, run an
    algorithm with progress, read the report, compare configurations, write the release."""
    from kerckhoffs.webapp.security import check_bind, check_port_free

    check_bind(host, allow_remote)
    check_port_free(host, port)
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ParameterError(
            "kerckhoffs app needs the app extra: pip install 'kerckhoffs[app]'"
        ) from None
    if demo:
        for line in demo_files(folder):
            err.print(line, highlight=False, soft_wrap=True)
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder (create it, or pass --demo)")
    from kerckhoffs.webapp import serve

    serve(
        folder,
        host=host,
        port=port,
        announce=lambda s: err.print(s, highlight=False, soft_wrap=True),
    )


DEMO_SCHEMA = """# The generated hospital table (kerckhoffs app --demo): examples/demo/schema.toml
[columns.patient_id]
role = "identifier"

[columns.age]
role = "quasi"
kind = "numeric"
widths = [5, 10, 20]

[columns.sex]
role = "quasi"
kind = "categorical"

[columns.zip]
role = "quasi"
kind = "categorical"
hierarchy = "hierarchies/zip.csv"

[columns.nationality]
role = "quasi"
kind = "categorical"
hierarchy = "hierarchies/nationality.csv"

[columns.disease]
role = "sensitive"
kind = "categorical"
hierarchy = "hierarchies/disease.csv"
"""


def demo_files(folder: Path) -> list[str]:
    """Write the demo files that are missing from ``folder``; what was written, one line each."""
    from kerckhoffs.datasets import generate_hospital, hospital_hierarchies

    folder.mkdir(parents=True, exist_ok=True)
    done = []
    table = folder / "hospital.csv"
    if not table.exists():
        generate_hospital(2000, seed=0).to_csv(table, index=False)
        done.append(f"wrote {table} (2,000 generated patients)")
    (folder / "hierarchies").mkdir(exist_ok=True)
    for name, rows in hospital_hierarchies().items():
        path = folder / "hierarchies" / f"{name}.csv"
        if not path.exists():
            path.write_text("".join(";".join(r) + "\n" for r in rows), encoding="utf-8")
            done.append(f"wrote {path}")
    schema = folder / "schema.toml"
    if not schema.exists():
        schema.write_text(DEMO_SCHEMA, encoding="utf-8")
        done.append(f"wrote {schema}")
    return done


def register(main: typer.Typer) -> None:
    """Add the command to the main app."""
    main.command("app")(app)
