"""Question: how fast is m-privacy verification of one group (paper 003 section V.A setting:
n_G = 15 providers, |T_G| in {150, 750}, k = 50, distinct l = 4, m = 5)? Targets: the exact
verifier under 0.5 ms per group; the heuristic verifiers under 10 microseconds per oracle call.

Groups are synthetic: SA values drawn with the frequencies of Adult's Occupation (14 values,
spec mprivacy.md 5.1), records spread over the providers with Exp(1) weights (spec 3.10),
every provider non-empty; 5 seeds. The exact verifier is timed from the group's rows (triples
built inside), the heuristics from their GroupStats (per call = time / oracle calls). CPU and
wall time, medians over repeats and seeds.

``baseline-*`` rows time the top-down / binary / adaptive verifiers as they were before the
issue-12 speed work (their code is copied below, with the oracle, lattice and knowledge base of
that version), side by side with the current ones; the script asserts that both give the same
verdicts and oracle-call counts. Writes ``results/mprivacy_verify.csv`` (+ ``_runs.csv``) and
``results/mprivacy_verify.png`` (per-call microseconds by method).

Run: ``python benchmarks/bench_mprivacy_verify.py [--repeat 7]``
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

import numpy as np
import pandas as pd

from _timing import RESULTS, median_wall_cpu
from kerckhoffs.errors import ParameterError
from kerckhoffs.mprivacy.constraints import Conjunction, Constraint, DistinctL, KAnon
from kerckhoffs.mprivacy.exact import m_private_groups
from kerckhoffs.mprivacy.fitness import fitness_batch
from kerckhoffs.mprivacy.group import GroupStats
from kerckhoffs.mprivacy.lattice import is_subset, layer_masks, members, popcount
from kerckhoffs.mprivacy.verify import (
    ALPHA_VERIFY,
    FITNESS_THRESHOLD,
    RECORDS_THRESHOLD,
    VerifyResult,
    _require_monotone,
    adaptive,
    average_provider_fitness,
    binary,
    bottom_up,
    direct,
    top_down,
)

OCCUPATION = [6020, 6008, 5984, 5540, 5408, 4808, 2970, 2316, 2046, 1480, 1420, 976, 232, 14]
N_PROV, M, K, L = 15, 5, 50, 4


# --- baseline: the verifiers before the issue-12 speed work (verbatim copies) ---------------


class BaselineOracle:
    """``breaches(I)``: whether removing coalition ``I`` (local provider indices) leaves a
    remainder violating C; ``calls`` counts the checks."""

    def __init__(self, stats: GroupStats, constraint: Constraint) -> None:
        self.stats = stats
        self.constraint = constraint
        self.calls = 0
        self.log: list[tuple[tuple[int, ...], bool]] = []

    def breaches(self, members: Iterable[int]) -> bool:
        idx = tuple(members)
        self.calls += 1
        s = self.stats
        if idx:
            rem = s.H - s.h[list(idx)].sum(axis=0)
            count = s.N - int(s.c[list(idx)].sum())
        else:
            rem, count = s.H, s.N
        out = not self.constraint.check(count, rem)
        self.log.append((idx, out))
        return out


class BaselineKnowledge:
    """SAFE / BREACH / UNRESOLVED for deciding layer ``m_eff`` of an ``n``-provider lattice.

    UNRESOLVED is a boolean mask over the ``m_eff``-coalitions (numpy), so marking a
    coalition safe resolves all its ``m_eff``-subsets in one vectorized step.
    """

    def __init__(self, n: int, m_eff: int) -> None:
        self.m_eff = m_eff
        self.safe: list[int] = []
        self.breach: list[int] = []
        self.masks = layer_masks(n, m_eff)
        self.alive = np.ones(self.masks.size, dtype=bool)

    @property
    def unresolved(self) -> np.ndarray:
        """The ``m_eff``-coalitions not yet known safe."""
        return self.masks[self.alive]

    def any_unresolved_in(self, mask: int) -> bool:
        """Whether some unresolved coalition is a sub-coalition of ``mask``."""
        return bool((self.alive & ((self.masks & ~mask) == 0)).any())

    def unresolved_in(self, mask: int) -> np.ndarray:
        """The unresolved sub-coalitions of ``mask``."""
        return self.masks[self.alive & ((self.masks & ~mask) == 0)]

    def known_safe(self, mask: int) -> bool:
        return any(is_subset(mask, s) for s in self.safe)

    def known_breach(self, mask: int) -> bool:
        return any(is_subset(b, mask) for b in self.breach)

    def mark_safe(self, mask: int) -> None:
        """Record ``mask`` safe: all its m_eff-subsets are resolved (downward pruning)."""
        self.safe.append(mask)
        self.alive &= (self.masks & ~mask) != 0

    def mark_breach(self, mask: int) -> None:
        """Record ``mask`` breaching: every super-coalition breaches (upward pruning)."""
        self.breach.append(mask)

    @property
    def done(self) -> bool:
        """Whether every m_eff-coalition is resolved safe."""
        return not self.alive.any()


class BaselineLattice:
    """The group's providers ranked by ascending power (Algorithm 1 line 2) and coalition
    power by mask; bit ``i`` of a mask is the i-th weakest provider."""

    def __init__(self, stats: GroupStats, constraint: Constraint, alpha: float) -> None:
        self.stats, self.constraint, self.alpha = stats, constraint, alpha
        n = stats.n_providers
        score, raw = fitness_batch(constraint, stats.c, stats.h, alpha)
        self.order = sorted(range(n), key=lambda i: (score[i], raw[i], i))
        self.n = n

    def local(self, mask: int) -> list[int]:
        return [self.order[i] for i in members(int(mask))]

    def ranked(self, masks: np.ndarray, descending: bool) -> np.ndarray:
        """``masks`` by power (ascending, or descending), ties by the member ranks
        (lexicographic on the ascending rank lists, which is the bit-reversed mask
        descending)."""
        masks = np.asarray(masks, dtype=np.int64)
        if masks.size <= 1:
            return masks
        s = self.stats
        bits = np.arange(self.n, dtype=np.int64)
        member = (masks[:, None] >> bits) & 1
        counts = member @ s.c[self.order]
        score, raw = fitness_batch(self.constraint, counts, member @ s.h[self.order], self.alpha)
        reverse = member @ (np.int64(1) << (self.n - 1 - bits))
        sign = -1.0 if descending else 1.0
        return masks[np.lexsort((-reverse, sign * raw, sign * score))]

    def layer(self, size: int, descending: bool) -> np.ndarray:
        return self.ranked(layer_masks(self.n, size), descending)


def baseline_top_down(
    stats: GroupStats, m: int, constraint: Constraint, alpha: float = ALPHA_VERIFY
) -> VerifyResult:
    """Layers ``n_G - 1`` down to ``m_eff``, weakest coalition first; a safe coalition
    resolves all its m-subsets (downward pruning, III.D)."""
    _require_monotone(constraint, "top-down")
    oracle = BaselineOracle(stats, constraint)
    me = stats.m_eff(m)
    if me == 0:
        return VerifyResult(not oracle.breaches(()), oracle.calls, "top-down")
    lat = BaselineLattice(stats, constraint, alpha)
    kb = BaselineKnowledge(lat.n, me)
    for size in range(lat.n - 1, me - 1, -1):
        masks = kb.unresolved if size == me else layer_masks(lat.n, size)
        if kb.safe:  # drop the sub-coalitions of what earlier layers found safe
            safe = np.array(kb.safe, dtype=np.int64)
            masks = masks[~((masks[:, None] & ~safe[None, :]) == 0).any(axis=1)]
        if size > me:  # only coalitions above some unresolved m-coalition can help
            sub = kb.unresolved
            masks = masks[((sub[None, :] & ~masks[:, None]) == 0).any(axis=1)]
        before = len(kb.safe)
        for mask in lat.ranked(masks, descending=False).tolist():
            if any(is_subset(mask, t) for t in kb.safe[before:]):
                continue
            if oracle.breaches(lat.local(mask)):
                if size == me:
                    return VerifyResult(False, oracle.calls, "top-down")
            else:
                kb.mark_safe(mask)
                if kb.done:
                    return VerifyResult(True, oracle.calls, "top-down")
    return VerifyResult(True, oracle.calls, "top-down")


def baseline_binary(
    stats: GroupStats, m: int, constraint: Constraint, alpha: float = ALPHA_VERIFY
) -> VerifyResult:
    """Algorithm 1 as corrected (spec 3.5): for each top coalition with an unresolved
    m-subset, a safe one prunes its subsets; a breaching one is bisected against its
    strongest unresolved m-subset (weakest members added first) down to a safe / breaching
    pair one provider apart, which prunes both ways."""
    _require_monotone(constraint, "binary")
    oracle = BaselineOracle(stats, constraint)
    me = stats.m_eff(m)
    if me == 0:
        return VerifyResult(not oracle.breaches(()), oracle.calls, "binary")
    lat = BaselineLattice(stats, constraint, alpha)
    n = lat.n
    full = (1 << n) - 1
    supers = [full & ~(1 << i) for i in range(n - 1, -1, -1)]
    if me == n - 1:
        for s in supers:
            if oracle.breaches(lat.local(s)):
                return VerifyResult(False, oracle.calls, "binary")
        return VerifyResult(True, oracle.calls, "binary")
    kb = BaselineKnowledge(n, me)
    cache: dict[int, bool] = {}

    def status(mask: int) -> bool:
        if kb.known_safe(mask):
            return False
        if kb.known_breach(mask):
            return True
        if mask not in cache:
            cache[mask] = oracle.breaches(lat.local(mask))
        return cache[mask]

    at = 0  # a top coalition with no unresolved m-subset never gets one back
    while not kb.done:
        while not kb.any_unresolved_in(supers[at]):
            at += 1
        top = supers[at]
        if not status(top):
            kb.mark_safe(top)
            continue
        kb.mark_breach(top)
        sub = int(lat.ranked(kb.unresolved_in(top), descending=True)[0])
        if status(sub):
            return VerifyResult(False, oracle.calls, "binary")
        lo, hi = sub, top
        while popcount(hi) - popcount(lo) >= 2:
            extra = members(hi & ~lo)[: (popcount(hi) + popcount(lo)) // 2 - popcount(lo)]
            mid = lo | sum(1 << i for i in extra)
            if status(mid):
                hi = mid
            else:
                lo = mid
        kb.mark_safe(lo)
        kb.mark_breach(hi)
    return VerifyResult(True, oracle.calls, "binary")


def baseline_adaptive(
    stats: GroupStats,
    m: int,
    constraint: Constraint,
    alpha: float = ALPHA_VERIFY,
    mode: str = "fitness",
    threshold: float | None = None,
) -> VerifyResult:
    """Binary for weak groups, top-down for robust ones (section III.E): ``mode`` "fitness"
    compares the average provider fitness with ``threshold`` (default 0.85),
    "records_per_provider" compares ``|G| / n_G`` (default 15)."""
    if mode == "fitness":
        value = average_provider_fitness(stats, constraint, alpha)
        limit = FITNESS_THRESHOLD if threshold is None else threshold
    elif mode == "records_per_provider":
        value = stats.N / stats.n_providers
        limit = RECORDS_THRESHOLD if threshold is None else threshold
    else:
        raise ParameterError(f"adaptive mode is 'fitness' or 'records_per_provider', got {mode!r}")
    use = baseline_binary if value < limit else baseline_top_down
    return use(stats, m, constraint, alpha)


# --- the benchmark ----------------------------------------------------------------------------


METHODS = (
    direct,
    bottom_up,
    top_down,
    binary,
    adaptive,
    baseline_top_down,
    baseline_binary,
    baseline_adaptive,
)


def group(size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p_sa = np.array(OCCUPATION) / sum(OCCUPATION)
    sa = rng.choice(len(OCCUPATION), size=size, p=p_sa)
    while True:
        w = rng.exponential(1.0, N_PROV)
        prov = rng.choice(N_PROV, size=size, p=w / w.sum())
        if np.unique(prov).size == N_PROV:
            return prov, sa


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    c = Conjunction((KAnon(K), DistinctL(L)))
    rows = []
    for size in (150, 750):
        for seed in range(args.seeds):
            prov, sa = group(size, seed)
            g = np.zeros(size, dtype=np.int64)
            wall, cpu, ok = median_wall_cpu(
                lambda prov=prov, sa=sa, g=g: m_private_groups(
                    g, prov, sa, 1, N_PROV, len(OCCUPATION), M, c
                ),
                args.repeat,
            )
            rows.append(
                dict(
                    size=size,
                    seed=seed,
                    method="exact",
                    private=bool(ok[0]),  # type: ignore[index]
                    calls=0,
                    wall_s=wall,
                    cpu_s=cpu,
                )
            )
            stats = GroupStats.from_records(prov, sa, len(OCCUPATION))
            counted: dict[str, int] = {}
            for fn in METHODS:
                wall, cpu, res = median_wall_cpu(
                    lambda fn=fn, stats=stats: fn(stats, M, c), args.repeat
                )
                assert res.private == ok[0]  # type: ignore[attr-defined,index]
                name = fn.__name__.replace("_", "-")
                counted[name] = res.calls  # type: ignore[attr-defined]
                if name.startswith("baseline-"):  # same calls as the current verifier
                    assert counted[name.removeprefix("baseline-")] == res.calls  # type: ignore[attr-defined]
                rows.append(
                    dict(
                        size=size,
                        seed=seed,
                        method=name,
                        private=res.private,
                        calls=res.calls,  # type: ignore[attr-defined]
                        wall_s=wall,
                        cpu_s=cpu,
                    )
                )
    df = pd.DataFrame(rows)
    df["wall_per_call_us"] = np.where(
        df.calls > 0, df.wall_s / df.calls.clip(lower=1) * 1e6, np.nan
    )
    df["cpu_per_call_us"] = np.where(df.calls > 0, df.cpu_s / df.calls.clip(lower=1) * 1e6, np.nan)
    RESULTS.mkdir(exist_ok=True)
    df.to_csv(RESULTS / "mprivacy_verify_runs.csv", index=False)
    summary = (
        df.groupby(["size", "method"], sort=False)
        .agg(
            private=("private", "mean"),
            calls=("calls", "median"),
            wall_ms=("wall_s", lambda s: 1e3 * s.median()),
            cpu_ms=("cpu_s", lambda s: 1e3 * s.median()),
            wall_per_call_us=("wall_per_call_us", "median"),
            cpu_per_call_us=("cpu_per_call_us", "median"),
        )
        .reset_index()
    )
    summary.to_csv(RESULTS / "mprivacy_verify.csv", index=False)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(summary.round(3).to_string(index=False))
    plot(summary)


def plot(summary: pd.DataFrame) -> None:
    """Per-call wall microseconds by method, one bar group per group size, target line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heur = summary[summary.method != "exact"]
    methods = list(dict.fromkeys(heur.method))
    sizes = list(dict.fromkeys(heur["size"]))
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(sizes)
    for i, size in enumerate(sizes):
        sub = heur[heur["size"] == size].set_index("method").reindex(methods)
        xs = [x + (i - (len(sizes) - 1) / 2) * width for x in range(len(methods))]
        ax.bar(xs, sub.wall_per_call_us, width, label=f"{size} records")
    ax.axhline(10.0, color="red", linestyle="--", linewidth=1, label="target 10 µs")
    ax.set_xticks(range(len(methods)), methods, fontsize=7, rotation=20)
    ax.set_ylabel("wall µs per oracle call")
    ax.set_title("m-privacy verification of one group (15 providers, k=50, l=4, m=5)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "mprivacy_verify.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
