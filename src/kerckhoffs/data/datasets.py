"""Datasets: the embedded synthetic hospital demo, and loaders for the real benchmark tables.

The demo table (:func:`generate_hospital`) is generated, not shipped, so the package carries
no data files and every run of the demo, the docs and the tests sees the same rows for the same
seed. Its shape follows the textbook examples of the anonymization literature (zip code, age,
sex, nationality as quasi-identifiers, a diagnosis as the sensitive attribute), with enough
structure that generalization is meaningful: zip codes cluster in a few 3-digit areas, the
nationality is dominated by one country, and the diagnosis depends on age and sex.

The loaders read the real data sets the papers' experiments use, by path (the project never
copies them in): UCI Adult (:func:`load_adult`, :func:`load_adult_training`) and the UCI
Census-Income (KDD) extract (:func:`load_census`). They clean the tables the way the papers
do (strip whitespace, drop or mark missing values), so that row counts and domain sizes match
the published settings. Every problem with the files is an :class:`InputError`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from kerckhoffs.data.hierarchy import Hierarchy
from kerckhoffs.data.io import out_of_memory
from kerckhoffs.data.schema import Column, Kind, Role, Schema
from kerckhoffs.errors import InputError, ParameterError
from kerckhoffs.randomness import Seed, generator

__all__ = [
    "ADULT_COLUMNS",
    "HOSPITAL_SENSITIVE_VALUES",
    "PROVIDER_COLUMN",
    "PROVIDER_SPLITS",
    "assign_providers",
    "generate_hospital",
    "hospital_hierarchies",
    "hospital_schema",
    "load_adult",
    "load_adult_training",
    "load_census",
    "with_providers",
]

PathLike = str | os.PathLike[str]

# --------------------------------------------------------------------------------------------
# Synthetic hospital demo
# --------------------------------------------------------------------------------------------

# Zip codes: 3-digit area -> 4-digit prefix -> 5-digit codes. Fixed, so that the hierarchy
# covers every value any seed can produce.
_ZIP_TREE: dict[str, dict[str, tuple[str, ...]]] = {
    "130": {
        "1302": ("13020", "13021", "13024", "13027"),
        "1303": ("13031", "13032", "13035", "13039"),
        "1305": ("13053", "13057", "13058"),
    },
    "148": {
        "1480": ("14801", "14803", "14804"),
        "1485": ("14850", "14853", "14855", "14856"),
        "1486": ("14860", "14861", "14864", "14867"),
    },
    "475": {
        "4750": ("47501", "47504", "47506"),
        "4751": ("47512", "47513", "47515", "47519"),
        "4752": ("47520", "47521", "47524"),
    },
    "021": {
        "0211": ("02110", "02111", "02113", "02114", "02115", "02116"),
        "0213": ("02134", "02135", "02138", "02139"),
    },
    "606": {
        "6060": ("60601", "60602", "60605", "60607"),
        "6061": ("60611", "60613", "60614", "60618"),
    },
}
# Share of patients per area (same order as _ZIP_TREE), and the share of the dominant
# nationality there: the two city areas (021, 606) are more diverse.
_AREA_WEIGHTS = (0.30, 0.22, 0.18, 0.17, 0.13)
_AREA_DOMINANT_SHARE = (0.78, 0.80, 0.82, 0.58, 0.62)

# Nationality: region -> (country, weight among the non-dominant countries). The first country
# is the dominant one; its weight is set per area by _AREA_DOMINANT_SHARE.
_NATIONALITY_TREE: dict[str, tuple[tuple[str, float], ...]] = {
    "North America": (("United States", 0.0), ("Canada", 3.0)),
    "Latin America": (("Mexico", 6.0), ("Brazil", 1.5), ("Cuba", 1.5)),
    "Europe": (("Germany", 2.0), ("United Kingdom", 2.0), ("Italy", 1.5), ("Russia", 1.5)),
    "Asia": (
        ("China", 3.0),
        ("India", 3.0),
        ("Japan", 1.0),
        ("Philippines", 1.5),
        ("Vietnam", 1.0),
    ),
}

# Diagnoses grouped by category (the disease hierarchy's first level).
_DISEASE_TREE: dict[str, tuple[str, ...]] = {
    "Respiratory": ("Flu", "Bronchitis", "Pneumonia"),
    "Digestive": ("Gastritis", "Dyspepsia", "Gastric ulcer"),
    "Cardiometabolic": ("Heart disease", "Diabetes"),
    "Infectious": ("HIV", "Hepatitis"),
    "Cancer": ("Lung cancer", "Breast cancer", "Prostate cancer"),
}

HOSPITAL_SENSITIVE_VALUES: tuple[str, ...] = (
    "HIV",
    "Lung cancer",
    "Breast cancer",
    "Prostate cancer",
)
"""Diagnoses treated as sensitive in the sensitive-subset setting (paper 001): the others are
ordinary and need no protection of their own."""

# Age bands (inclusive low, exclusive high) and their shares: a hospital population, heavier in
# middle and old age than the general population.
_AGE_BANDS = ((0, 5), (5, 18), (18, 30), (30, 45), (45, 60), (60, 75), (75, 85), (85, 96))
_AGE_BAND_WEIGHTS = (0.05, 0.07, 0.12, 0.17, 0.20, 0.21, 0.12, 0.06)
_MAX_AGE = 95


def _zip_leaves() -> list[tuple[str, str, str]]:
    """(zip5, area, prefix4) for every zip code, in depth-first order."""
    return [
        (z, area, prefix)
        for area, prefixes in _ZIP_TREE.items()
        for prefix, zips in prefixes.items()
        for z in zips
    ]


def _nationality_leaves() -> list[tuple[str, str, float]]:
    """(country, region, weight) for every nationality, in depth-first order."""
    return [(c, region, w) for region, cs in _NATIONALITY_TREE.items() for c, w in cs]


def _disease_leaves() -> list[tuple[str, str]]:
    """(diagnosis, category) for every diagnosis, in depth-first order."""
    return [(d, cat) for cat, ds in _DISEASE_TREE.items() for d in ds]


def _sample_rows(rng: np.random.Generator, cell: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Draw one category per row from the distribution ``probs[cell[i]]``, without a row loop.

    ``probs`` is (cells, categories) of non-negative weights, normalized per row; a category of
    weight 0 is never drawn. The cumulative distributions of
    all cells are laid end to end on one axis (cell ``c`` occupies ``(c, c + 1]``), so a single
    ``searchsorted`` of ``cell + u`` picks the category in every row's own cell.
    """
    n_cells, n_cat = probs.shape
    positive = probs > 0
    last = n_cat - 1 - np.argmax(positive[:, ::-1], axis=1)  # last possible category per cell
    cum = np.cumsum(probs, axis=1) / probs.sum(axis=1, keepdims=True)
    cum[np.arange(n_cat)[None, :] >= last[:, None]] = 1.0  # no rounding sliver past `last`
    flat = (np.arange(n_cells)[:, None] + cum).ravel()
    u = rng.random(cell.shape[0])
    pos = np.searchsorted(flat, cell + u, side="right")
    # cell + u can round up to cell + 1 for u just below 1: that draw belongs to `last`.
    return np.minimum(pos - cell * n_cat, last[cell])


def _logistic(x: np.ndarray, mid: float, scale: float) -> np.ndarray:
    """A smooth step from 0 to 1 around ``mid``: how risks rise with age."""
    return 1.0 / (1.0 + np.exp(-(x - mid) / scale))


def _disease_probabilities() -> np.ndarray:
    """P(diagnosis | age, sex) as a (96 * 2, diagnoses) table; row ``2 * age + is_male``.

    Relative weights, normalized per (age, sex): respiratory infections common at all ages
    (more in children and the old), digestive complaints in adults, heart disease and diabetes
    rising with age (heart disease more for men), HIV in young and middle-aged adults (more
    men), cancers late in life, breast cancer almost only for women, prostate cancer only for
    men. The rare diagnoses end up at about 1-2 % each, and none above ~16 % overall.
    """
    a = np.arange(_MAX_AGE + 1, dtype=float)
    child = (a < 10).astype(float)
    adult = _logistic(a, 15.0, 2.0)
    weights: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # name -> (female, male)

    def same(w: np.ndarray, male_factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
        return w, w * male_factor

    weights["Flu"] = same(9.0 * (1.0 + 0.4 * child + 0.3 * (a >= 70)))
    weights["Bronchitis"] = same(7.5 * (1.0 + 0.5 * child + 0.4 * (a >= 65)))
    weights["Pneumonia"] = same(4.0 + 10.0 * _logistic(a, 70.0, 6.0) + 3.0 * (a < 5))
    weights["Gastritis"] = same(8.0 * (0.4 + 0.6 * adult))
    weights["Dyspepsia"] = same(7.0 * (0.5 + 0.5 * _logistic(a, 25.0, 5.0)))
    weights["Gastric ulcer"] = same(2.0 + 6.0 * _logistic(a, 50.0, 8.0), 1.3)
    weights["Heart disease"] = same(0.3 + 20.0 * _logistic(a, 62.0, 7.0), 1.7)
    weights["Diabetes"] = same(1.0 + 14.0 * _logistic(a, 55.0, 8.0))
    weights["HIV"] = same(0.01 + 1.6 * adult * (1.0 - _logistic(a, 55.0, 5.0)), 1.8)
    weights["Hepatitis"] = same(0.1 + 1.4 * adult, 1.3)
    weights["Lung cancer"] = same(0.02 + 3.0 * _logistic(a, 63.0, 6.0), 1.4)
    breast = 0.02 + 5.0 * _logistic(a, 52.0, 7.0)
    weights["Breast cancer"] = (breast, 0.01 * breast)
    weights["Prostate cancer"] = (np.zeros_like(a), 0.02 + 9.0 * _logistic(a, 66.0, 5.0))

    names = [d for d, _ in _disease_leaves()]
    table = np.empty((a.size, 2, len(names)))
    for j, name in enumerate(names):
        table[:, 0, j], table[:, 1, j] = weights[name]
    flat = table.reshape(a.size * 2, len(names))
    return flat / flat.sum(axis=1, keepdims=True)


def _check_int(value: object, name: str, minimum: int) -> int:
    """``value`` as an int, or an InputError if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def generate_hospital(rows: int = 2000, seed: int = 0) -> pd.DataFrame:
    """A synthetic hospital table: the project's embedded demo data, reproducible from a seed.

    Columns, in order: ``patient_id`` (explicit identifier ``P000001``...), ``age`` (int,
    0-95, adult-heavy), ``sex`` (``F``/``M``), ``zip`` (5-digit string, ~50 codes in five
    3-digit areas), ``nationality`` (14 countries, about 3/4 one country, fewer in the city
    areas), ``disease`` (13 diagnoses depending on age and sex; the rare ones listed in
    :data:`HOSPITAL_SENSITIVE_VALUES` at about 1-2 % each, none above ~16 %, so l-diversity
    up to l = 4 is feasible on the whole table).

    Generation is vectorized over rows with ``numpy.random.default_rng(seed)``: the same
    ``rows`` and ``seed`` always give an identical DataFrame. :func:`hospital_hierarchies`
    covers every value this can emit.
    """
    n = _check_int(rows, "rows", 1)
    seed = _check_int(seed, "seed", 0)
    rng = np.random.default_rng(seed)

    # Age: band by weight, then uniform within the band.
    lo = np.array([b[0] for b in _AGE_BANDS])
    width = np.array([b[1] - b[0] for b in _AGE_BANDS])
    p_band = np.array(_AGE_BAND_WEIGHTS) / sum(_AGE_BAND_WEIGHTS)
    band = rng.choice(len(_AGE_BANDS), size=n, p=p_band)
    age = lo[band] + np.floor(rng.random(n) * width[band]).astype(np.int64)

    # Sex: women are a small majority among adults and a larger one among the very old.
    p_female = np.where(age >= 75, 0.60, np.where(age >= 18, 0.53, 0.49))
    male = (rng.random(n) >= p_female).astype(np.int64)

    # Zip: area by weight, then a zip within the area (earlier codes more populous).
    leaves = _zip_leaves()
    areas = list(_ZIP_TREE)
    zip_codes = np.array([z for z, _, _ in leaves], dtype=object)
    leaf_area = np.array([areas.index(ar) for _, ar, _ in leaves])
    zip_probs = np.zeros((len(areas), len(leaves)))
    for k in range(len(areas)):
        idx = np.flatnonzero(leaf_area == k)
        w = 1.0 / (1.0 + 0.25 * np.arange(idx.size))
        zip_probs[k, idx] = w / w.sum()
    p_area = np.array(_AREA_WEIGHTS) / sum(_AREA_WEIGHTS)
    area = rng.choice(len(areas), size=n, p=p_area)
    zip_idx = _sample_rows(rng, area, zip_probs)

    # Nationality: depends on the area (the city areas are more diverse).
    nat = _nationality_leaves()
    countries = np.array([c for c, _, _ in nat], dtype=object)
    others = np.array([w for _, _, w in nat])
    others = others / others.sum()
    nat_probs = np.array([s * (others == 0) + (1.0 - s) * others for s in _AREA_DOMINANT_SHARE])
    nat_idx = _sample_rows(rng, area, nat_probs)

    # Disease: depends on age and sex.
    diseases = np.array([d for d, _ in _disease_leaves()], dtype=object)
    dis_idx = _sample_rows(rng, 2 * age + male, _disease_probabilities())

    width_id = max(6, len(str(n)))
    ids = np.strings.add("P", np.strings.zfill(np.arange(1, n + 1).astype(str), width_id))
    return pd.DataFrame(
        {
            "patient_id": pd.array(ids.astype(object), dtype="str"),
            "age": age.astype(np.int64),
            "sex": pd.array(np.where(male == 1, "M", "F").astype(object), dtype="str"),
            "zip": pd.array(zip_codes[zip_idx], dtype="str"),
            "nationality": pd.array(countries[nat_idx], dtype="str"),
            "disease": pd.array(diseases[dis_idx], dtype="str"),
        }
    )


def hospital_hierarchies() -> dict[str, list[list[str]]]:
    """ARX-format hierarchies for the demo's categorical columns (and ``disease``, for later).

    Keys ``zip``, ``nationality`` and ``disease``. One row per leaf,
    ``[leaf, level1, ..., "*"]``, all rows of a hierarchy the same length, leaves in
    depth-first order (siblings adjacent). ``zip``: ``13053`` -> ``1305*`` -> ``130**`` ->
    ``*``; ``nationality``: country -> region -> ``*``; ``disease``: diagnosis -> category ->
    ``*``. They cover every value :func:`generate_hospital` can emit, for any seed.
    A fresh structure is returned on each call, so callers may modify it.
    """
    return {
        "zip": [[z, prefix + "*", area + "**", "*"] for z, area, prefix in _zip_leaves()],
        "nationality": [[c, region, "*"] for c, region, _ in _nationality_leaves()],
        "disease": [[d, cat, "*"] for d, cat in _disease_leaves()],
    }


# --------------------------------------------------------------------------------------------
# Real data loaders
# --------------------------------------------------------------------------------------------

ADULT_COLUMNS: tuple[str, ...] = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "salary",
)
"""Column names of UCI ``adult.data`` / ``adult.test`` (the files have no header)."""

_ADULT_NUMERIC = (
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
)

_CENSUS_FILE = "census_income.csv.gz"
_CENSUS_COLUMNS = (
    "age",
    "sex",
    "education",
    "marital_status",
    "race",
    "hispanic_origin",
    "workclass",
    "country",
    "citizenship",
    "occupation_major",
    "occupation",
    "income",
)
_ADULT_TRAINING_FILE = "adult.csv"


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (pandas parser errors span several)."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _existing_file(path: PathLike, default_name: str | None = None) -> Path:
    """``path`` as a readable file; a directory means its ``default_name`` file."""
    p = Path(path)
    if default_name is not None and p.is_dir():
        p = p / default_name
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if not p.is_file():
        raise InputError(f"{p}: not a file")
    return p


def _read_csv(path: Path, **kwargs: object) -> pd.DataFrame:
    """``pandas.read_csv`` with the C parser, turning every read failure into an InputError."""
    try:
        return pd.read_csv(path, engine="c", **kwargs)
    except (OSError, ValueError, EOFError, pd.errors.ParserError) as exc:
        if out_of_memory(exc):
            raise MemoryError(f"{path}: out of memory while parsing the CSV") from None
        raise InputError(f"{path}: cannot read: {_one_line(exc)}") from exc


def _clean_strings(df: pd.DataFrame, missing: tuple[str, ...] = ("?",)) -> None:
    """Strip whitespace from the text columns in place and turn ``missing`` markers into NA."""
    for col in df.columns:
        if pd.api.types.is_string_dtype(df[col].dtype) or df[col].dtype == object:
            s = df[col].astype("str").str.strip()
            df[col] = s.mask(s.isin(missing))


def _to_int(df: pd.DataFrame, columns: tuple[str, ...], path: Path) -> None:
    """Convert ``columns`` to int64 in place, naming the first column that is not integral."""
    for col in columns:
        if df[col].dtype == np.int64:
            continue
        try:
            df[col] = df[col].astype(np.int64)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"{path}: column {col!r} must hold integers: {_one_line(exc)}"
            ) from exc


def _check_columns(df: pd.DataFrame, expected: tuple[str, ...], path: Path) -> None:
    """An InputError naming the columns of ``expected`` that the file lacks."""
    missing = [c for c in expected if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}")


def _read_adult_file(path: Path) -> pd.DataFrame:
    """One of ``adult.data`` / ``adult.test``, with its rows holding ``?`` dropped."""
    df = _read_csv(
        path,
        header=None,
        names=list(ADULT_COLUMNS),
        index_col=False,
        skipinitialspace=True,
        comment="|",  # adult.test opens with the line "|1x3 Cross validator"
        keep_default_na=False,
        na_values=["?"],
        skip_blank_lines=True,
    )
    _clean_strings(df)
    df = df.dropna(how="any")
    df["salary"] = df["salary"].str.removesuffix(".")
    _to_int(df, _ADULT_NUMERIC, path)
    return df


def load_adult(
    directory: PathLike,
    *,
    providers: int | None = None,
    provider_split: str = "uniform",
    seed: Seed = None,
) -> pd.DataFrame:
    """UCI Adult, ``adult.data`` + ``adult.test`` from ``directory``, without missing values.

    The dataset of papers 000, 001 and 003: 45,222 rows once every row holding a ``?`` is
    dropped. Columns are :data:`ADULT_COLUMNS`; numeric ones are int64, the others strings
    with surrounding whitespace stripped, and the test split's labels lose their trailing
    ``.`` so both splits share the ``salary`` values ``<=50K`` and ``>50K``.

    ``providers`` (with ``provider_split`` and ``seed``) adds a ``provider`` column, each record
    assigned to one of that many data providers by :func:`assign_providers` (paper 003's
    collaborative setting); None (the default) adds nothing.
    """
    d = Path(directory)
    if not d.exists():
        raise InputError(f"{d}: no such directory")
    if not d.is_dir():
        raise InputError(f"{d}: not a directory (expected the one holding adult.data)")
    parts = [_read_adult_file(_existing_file(d / name)) for name in ("adult.data", "adult.test")]
    df = pd.concat(parts, ignore_index=True)
    return with_providers(df, providers, provider_split, seed)


def load_census(
    path: PathLike,
    *,
    in_universe: bool = True,
    providers: int | None = None,
    provider_split: str = "uniform",
    seed: Seed = None,
) -> pd.DataFrame:
    """UCI Census-Income (KDD) extract ``census_income.csv.gz`` (the file, or its directory).

    Stands in for the IPUMS Census of paper 000. With ``in_universe`` (the paper-like setting)
    only people with an occupation are kept (``occupation != 0``: 148,318 rows, sensitive
    attribute ``occupation`` with 46 codes); otherwise all 299,285 rows. ``age`` and
    ``occupation`` (a detailed occupation code) are int64, other columns strings with
    whitespace stripped; ``?`` (in ``country``) and empty fields (in ``hispanic_origin``)
    become missing values.

    ``providers`` (with ``provider_split`` and ``seed``) adds a ``provider`` column, each record
    assigned to one of that many data providers by :func:`assign_providers` (paper 003's
    collaborative setting); None (the default) adds nothing.
    """
    p = _existing_file(path, _CENSUS_FILE)
    df = _read_csv(p, keep_default_na=False, na_values=["?", ""])
    _check_columns(df, _CENSUS_COLUMNS, p)
    _to_int(df, ("age", "occupation"), p)
    if in_universe:
        df = df.loc[df["occupation"].to_numpy() != 0].reset_index(drop=True)
    _clean_strings(df)
    return with_providers(df, providers, provider_split, seed)


def load_adult_training(
    path: PathLike,
    *,
    providers: int | None = None,
    provider_split: str = "uniform",
    seed: Seed = None,
) -> pd.DataFrame:
    """The 30,162-row Adult training split ``adult.csv`` (the file, or its directory).

    The version paper 004 and most anonymization tools use: ``;``-separated with a header,
    nine columns (``sex``, ``age``, ``race``, ``marital-status``, ``education``,
    ``native-country``, ``workclass``, ``occupation``, ``salary-class``), no missing values.
    ``age`` is int64, the others strings with whitespace stripped.

    ``providers`` (with ``provider_split`` and ``seed``) adds a ``provider`` column, each record
    assigned to one of that many data providers by :func:`assign_providers` (paper 003's
    collaborative setting); None (the default) adds nothing.
    """
    p = _existing_file(path, _ADULT_TRAINING_FILE)
    df = _read_csv(p, sep=";", keep_default_na=False, na_values=["?"], skipinitialspace=True)
    _check_columns(df, ("age",), p)
    _to_int(df, ("age",), p)
    _clean_strings(df)
    return with_providers(df, providers, provider_split, seed)


def hospital_schema(*, sensitive_subset: bool = False) -> Schema:
    """The schema of :func:`generate_hospital`'s table.

    ``patient_id`` is an identifier; age (numeric, 5/10/20-year intervals), sex, zip and
    nationality are quasi-identifiers; disease is sensitive. With ``sensitive_subset`` only
    :data:`HOSPITAL_SENSITIVE_VALUES` are sensitive (paper 001's setting).
    """
    rows = hospital_hierarchies()
    return Schema(
        (
            Column("patient_id", Role.IDENTIFIER),
            Column("age", Role.QUASI, Kind.NUMERIC, widths=(5, 10, 20)),
            Column("sex", Role.QUASI, Kind.CATEGORICAL),
            Column("zip", Role.QUASI, Kind.CATEGORICAL, Hierarchy(rows["zip"], "zip")),
            Column(
                "nationality",
                Role.QUASI,
                Kind.CATEGORICAL,
                Hierarchy(rows["nationality"], "nationality"),
            ),
            Column(
                "disease", Role.SENSITIVE, Kind.CATEGORICAL, Hierarchy(rows["disease"], "disease")
            ),
        ),
        frozenset(HOSPITAL_SENSITIVE_VALUES) if sensitive_subset else None,
    )


# --------------------------------------------------------------------------------------------
# Data providers (paper 003: collaborative publishing from several providers)
# --------------------------------------------------------------------------------------------

PROVIDER_COLUMN = "provider"
"""The column :func:`with_providers` adds (declare it with role ``provider`` in a schema)."""
PROVIDER_SPLITS = ("uniform", "exponential")
"""How :func:`assign_providers` sizes the providers."""


def assign_providers(
    data: pd.DataFrame | int, n: int, split: str = "uniform", seed: Seed = None
) -> pd.Series:
    """One provider label per record, for tables that have no provider column (Adult, Census).

    Paper 003 (Goryczka, Xiong, Fung, "m-Privacy for Collaborative Data Publishing") section
    V distributes the Adult records among ``n`` providers "uniformly or exponentially"; our
    resolution fixes how (the paper leaves the split's parameters unstated:
    ``docs/theory/m-privacy.md#procedures``, ``#err-provider-sizes``): provider
    weights ``w_i ~ Exp(1)`` i.i.d. (``split="exponential"``) or all equal (``"uniform"``),
    and each record goes to provider ``i`` with probability ``w_i / sum(w)``; no provider is
    left empty. The repair is done up front: ``n`` distinct records drawn at random get one
    provider each, the other records are drawn from the weights (so every provider holds at
    least one record, and the sizes still follow the weights for tables much larger than
    ``n``).

    ``data`` is the table (its index is kept) or a number of records. Labels are ``P01`` ..
    ``P10`` (zero-padded so they sort in provider order). ``seed`` is as everywhere (None:
    fresh OS randomness, an int, or a Generator, via :func:`kerckhoffs.randomness.generator`);
    a seed is fine here, unlike for an anonymizer's random choices, since the assignment
    simulates where the data came from and protects nothing.

    >>> s = assign_providers(12, 3, "exponential", seed=1)
    >>> len(s), sorted(s.unique())
    (12, ['P1', 'P2', 'P3'])
    """
    if isinstance(data, pd.DataFrame):
        rows, index = len(data), data.index
    else:
        rows = _check_int(data, "records", 0)
        index = pd.RangeIndex(rows)
    n = _check_int(n, "providers", 1)
    if split not in PROVIDER_SPLITS:
        raise ParameterError(
            f"provider split must be {' or '.join(PROVIDER_SPLITS)}, got {split!r}"
        )
    if rows < n:
        raise ParameterError(f"{n} providers need at least {n} records, the table has {rows}")
    rng = generator(seed)
    weights = rng.exponential(1.0, n) if split == "exponential" else np.ones(n)
    code = rng.choice(n, size=rows, p=weights / weights.sum())
    first = rng.choice(rows, size=n, replace=False)  # one record per provider: none empty
    code[first] = np.arange(n)
    width = len(str(n))
    labels = np.array([f"P{i + 1:0{width}d}" for i in range(n)], dtype=object)
    return pd.Series(pd.array(labels[code], dtype="str"), index=index, name=PROVIDER_COLUMN)


def with_providers(
    df: pd.DataFrame, providers: int | None, split: str = "uniform", seed: Seed = None
) -> pd.DataFrame:
    """``df`` with a :data:`PROVIDER_COLUMN` from :func:`assign_providers` (``df`` itself
    when ``providers`` is None); a table that already has the column is refused."""
    if providers is None:
        return df
    if PROVIDER_COLUMN in df.columns:
        raise InputError(f"the table already has a column {PROVIDER_COLUMN!r}")
    out = df.copy()
    out[PROVIDER_COLUMN] = assign_providers(df, providers, split, seed)
    return out
