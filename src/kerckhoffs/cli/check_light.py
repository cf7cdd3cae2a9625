"""``kerckhoffs check RELEASE -m MODEL ...`` without pandas and without building the typer
application: the common case of checking a release directory written by kerckhoffs, which
otherwise spends most of its time starting up (pandas alone costs more than a peer's whole
check of a small release).

:func:`run` takes the command only in its plain form (a release directory, ``-m``/``--model``,
``--worst``) and only when everything it reads is the plain case too: a generalization
release, verified against its ``release.json`` (:func:`~kerckhoffs.release.integrity.read_manifest`,
the same digests and the same refusals as the full reader), its Parquet table holding a
``group`` column of integers and text cells with no missing value, no sensitive subset, the
models that read only the (groups x SA values) histogram, and every model satisfied. It reads
the table with pyarrow, builds the partition and the histogram with numpy, and evaluates the
same model classes on it (:meth:`~kerckhoffs.models.base.PrivacyModel.evaluate`); the lines it
prints are made by the functions the full command prints with, so they are the same lines.

Anything else, including every error and every violated model (whose worst groups the full
command lists), returns None before printing anything, and the full command runs from the
start: its error lines, verdicts and exit codes stay the only ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from kerckhoffs.models.base import ModelResult
    from kerckhoffs.release.risk import ReidentificationRisk


@dataclass(frozen=True)
class Checked:
    """What the light path found: everything the printed lines need."""

    path: Path
    algorithm: str
    rows: int
    groups: int
    qi_names: list[str]
    sa_name: str
    results: list[ModelResult]
    risk: ReidentificationRisk
    alone: int


def run(args: Sequence[str]) -> int | None:
    """The exit code of ``kerckhoffs ARGS`` when the light path can give it (see the module
    docstring), else None with nothing printed."""
    parsed = parse_args(args)
    if parsed is None:
        return None
    path, models = parsed
    try:
        checked = check_release(path, models)
    except KeyboardInterrupt:
        return 130  # as the full command
    except Exception:  # every refusal is the full command's to word
        return None
    if checked is None:
        return None
    from kerckhoffs.cli.output import fail_os_error

    try:
        print_checked(checked)
    except OSError as exc:  # the terminal or pipe went away: as the full command says it
        return fail_os_error(exc)
    return 0


def parse_args(args: Sequence[str]) -> tuple[Path, list[str]] | None:
    """``(release directory, model texts)`` of ``check DIR -m M [-m M ...] [--worst N]``;
    None for any other form (an option it does not know, a missing or repeated argument, a
    value that looks like an option)."""
    if not args or args[0] != "check":
        return None
    data: str | None = None
    models: list[str] = []
    rest = list(args[1:])
    while rest:
        token = rest.pop(0)
        if token in ("-m", "--model", "--worst"):
            option, value = token, rest.pop(0) if rest else ""
        elif token.startswith(("--model=", "--worst=")):
            option, _, value = token.partition("=")
        elif token.startswith("-") or data is not None:
            return None
        else:
            data = token
            continue
        if not value or value.startswith("-"):
            return None
        if option != "--worst":
            models.append(value)
        elif not (value.isascii() and value.isdigit()):
            return None
    if data is None or not models or not Path(data).is_dir():
        return None
    return Path(data), models


def check_release(path: Path, texts: list[str]) -> Checked | None:
    """The light check of release directory ``path`` against the models ``texts``, or None
    when it is not the plain case. Raises whatever reading it raises (the caller then leaves
    it to the full command)."""
    import numpy as np

    from kerckhoffs.data.schema import Kind, SensitiveMode
    from kerckhoffs.models import parse_model
    from kerckhoffs.models.histogram import GroupHistogram
    from kerckhoffs.release.format import GROUP, Scheme
    from kerckhoffs.release.integrity import checked_models, listed_files, read_manifest
    from kerckhoffs.release.light import PLAIN_MODELS, one_cell_per_group
    from kerckhoffs.release.provenance import published_provenance
    from kerckhoffs.release.risk import risk_from_sizes

    models = [parse_model(t) for t in texts]
    if any(type(m).__name__ not in PLAIN_MODELS for m in models):
        return None
    meta, notes = read_manifest(path, verify=True)
    if notes or meta["scheme"] != Scheme.GENERALIZATION or meta.get("sensitive_values"):
        return None
    sa_info = meta["sensitive"]
    if sa_info.get("kind", Kind.CATEGORICAL) != Kind.CATEGORICAL:
        return None
    qi_names = [q["name"] for q in meta["quasi"]]
    sa_name = sa_info["name"]
    names = [GROUP, *qi_names, sa_name]
    listed = listed_files(meta)
    table_file = "release.parquet"
    if (listed is not None and table_file not in listed) or len(set(names)) != len(names):
        return None
    checked_models(meta)  # refused there when a recorded model is unreadable
    columns = read_text_columns(path / table_file, names)
    if columns is None:
        return None
    group, codes = columns[GROUP], [columns[q][0] for q in qi_names]
    if not one_cell_per_group(group, codes):
        return None
    sa, sa_labels = columns[sa_name]
    hist = GroupHistogram.from_codes(
        group,
        sa,
        int(group.max()) + 1,
        len(sa_labels),
        None,
        SensitiveMode(meta.get("sensitive_mode", SensitiveMode.SET)),
        Kind.CATEGORICAL,
    )
    for m in models:
        m.validate(hist, repr(sa_name))
    results = [m.evaluate(hist) for m in models]
    if not all(r.satisfied for r in results):
        return None  # the worst groups are listed by the full command
    sizes = np.bincount(group)
    return Checked(
        path=path,
        algorithm=published_provenance(meta).algorithm,
        rows=int(group.shape[0]),
        groups=int(sizes.shape[0]),
        qi_names=qi_names,
        sa_name=sa_name,
        results=results,
        risk=risk_from_sizes(sizes),
        alone=int(np.count_nonzero(sizes == 1)),
    )


def read_text_columns(path: Path, names: list[str]) -> dict[str, Any] | None:
    """From Parquet file ``path``: the ``group`` column (``names[0]``) as group ids numbered by
    first appearance (as :meth:`~kerckhoffs.release.Partition.from_labels` numbers them), and
    every other column of ``names`` as ``(codes, labels)`` with the labels sorted (the order
    :meth:`~kerckhoffs.data.table.Table.encode` gives a categorical column of text). None when
    the file is not the plain case: a column missing or named twice, a group that is not an
    integer, a cell that is not text, a missing cell, no row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kerckhoffs.release.light import first_appearance

    # not pq.read_table (its dataset reader loads pandas) nor pyarrow.compute (slow to load):
    # text columns come as dictionaries straight from the file, codes from their indices
    parquet = pq.ParquetFile(path, read_dictionary=names[1:])
    file_names = parquet.schema_arrow.names
    if len(set(file_names)) != len(file_names) or not set(names) <= set(file_names):
        return None
    table = parquet.read(columns=names, use_threads=False)
    if table.num_rows == 0 or any(table.column(c).null_count for c in names):
        return None
    labels = table.column(names[0])
    if not pa.types.is_integer(labels.type):
        return None
    out: dict[str, Any] = {names[0]: first_appearance(integers(labels.combine_chunks()))}
    for name in names[1:]:
        col = table.column(name)
        if not pa.types.is_dictionary(col.type) or not (
            pa.types.is_string(col.type.value_type) or pa.types.is_large_string(col.type.value_type)
        ):
            return None
        index: dict[str, int] = {}  # each text's code, in order of first appearance
        parts = []
        for chunk in col.chunks:
            texts = chunk.dictionary.to_pylist()
            lut = np.array([index.setdefault(t, len(index)) for t in texts], dtype=np.int32)
            parts.append(lut[integers(chunk.indices)] if len(texts) else np.zeros(0, np.int32))
        texts = list(index)
        order = sorted(range(len(texts)), key=texts.__getitem__)
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        out[name] = (rank[np.concatenate(parts)], [texts[i] for i in order])
    return out


def integers(array: Any) -> np.ndarray:
    """A pyarrow integer array with no missing value as numpy, read from its data buffer
    (pyarrow's ``to_numpy`` loads pandas to look for extension types)."""
    import numpy as np
    import pyarrow as pa

    kind = "i" if pa.types.is_signed_integer(array.type) else "u"
    dtype = np.dtype(f"{kind}{array.type.bit_width // 8}")
    return np.frombuffer(
        array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize
    )


def headline(what: str, rows: int, groups: int, qi_names: list[str], sa_name: str) -> str:
    """The first line of ``check`` on a table or a release of groups."""
    from kerckhoffs.cli.output import counted

    return (
        f"{what}: {counted(rows, 'row')}, {counted(groups, 'group')}, "
        f"QIs {', '.join(qi_names)}; SA {sa_name}"
    )


def print_risk(r: ReidentificationRisk) -> None:
    """The prosecutor, marketer and (with a population) journalist risks, one line each."""
    from kerckhoffs.cli.output import counted, out
    from kerckhoffs.models.base import format_number

    num, pct = format_number, (lambda x: f"{format_number(round(100 * x, 2))} %")
    out.print(
        f"re-identification risk (a record is at risk above {num(r.threshold)}): prosecutor "
        f"highest {num(r.prosecutor_highest)}, average {num(r.prosecutor_average)}, records at "
        f"risk {pct(r.prosecutor_at_risk)}, sample uniques {pct(r.sample_uniques)}; marketer "
        f"{num(r.marketer)}"
    )
    if r.journalist_highest is not None:
        out.print(
            f"journalist (population of {counted(r.population_rows or 0, 'row')}): highest "
            f"{num(r.journalist_highest)}, average {num(r.journalist_average or 0.0)}, records "
            f"at risk {pct(r.journalist_at_risk or 0.0)}, population uniques "
            f"{pct(r.population_uniques or 0.0)}"
        )


def print_checked(c: Checked) -> None:
    """The lines the full ``check`` prints for a release whose models all hold."""
    from kerckhoffs.cli.output import out, print_alone, print_results
    from kerckhoffs.release.format import Scheme

    what = f"release {c.path} ({c.algorithm}, {Scheme.GENERALIZATION.value})"
    out.print(headline(what, c.rows, c.groups, c.qi_names, c.sa_name))
    print_results(c.results)
    print_risk(c.risk)
    print_alone(c.alone, c.rows, c.sa_name)


__all__ = [
    "Checked",
    "check_release",
    "headline",
    "integers",
    "parse_args",
    "print_checked",
    "print_risk",
    "read_text_columns",
    "run",
]
