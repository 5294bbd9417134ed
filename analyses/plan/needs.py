"""Each question's requirement: what SC, Q1, Q3, Q4 and Q5 ask of one model x dimension and Q2 and Q5 of a model's
dimensions pooled (``_needs``, ``_q2_needs``, ``_q5_needs``), each figure in the closed forms of
:mod:`bias_validity.psychometrics.planning`, and the deciding rows' power refined by simulating the interval over
the planning model's items (``_refine``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import numpy as np
from scipy.special import stdtrit

from bias_validity.analyses.config import AnalysisConfig
from bias_validity.analyses.plan.model import _ABL, _EMB, _EXP, _IMP, _LOG, _REF, _Cell, _Moments
from bias_validity.analyses.plan.search import _MAX_SEARCH_ITEMS, _Need
from bias_validity.probes.schema import Method
from bias_validity.psychometrics.planning import (
    PlanTargets,
    fieller_half_width,
    fisher_z_half_width,
    fisher_z_power,
    fisher_z_sample_size,
    icc_interval_width,
    icc_sample_size,
    power_to_clear,
    spearman_from_pearson,
    t_half_width,
    tost_power,
)
from bias_validity.psychometrics.validity import FISHER_Z_VARIANCE

_SPEARMAN_FACTOR = FISHER_Z_VARIANCE["spearman"][0]  # the Fisher-z variance factor of Q2's interval
_HALF, _DECIDE = "half-width", "decide"


def _t_margin(sd: float, items: int, ci: float, power: float) -> float:
    """Distance from a threshold the truth must clear for a ``ci`` t interval to clear it with chance ``power``."""
    df = items - 1
    return float((stdtrit(df, 0.5 + ci / 2) + stdtrit(df, power)) * sd / np.sqrt(items))


#: Studies simulated per design when a decision's power is refined by simulation (SE of a power near 0.8: 0.013).
_POWER_SIMULATIONS = 1000


def _sample(
    parts: list[tuple[np.ndarray, np.ndarray]], items: int, reps: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Mean and standard error of each of ``parts`` (true item values, binomial variance x reps) over ``items``
    items drawn jointly (one item set for all parts), binomial noise as normal: per simulated study."""
    idx = rng.integers(parts[0][0].size, size=(_POWER_SIMULATIONS, items))
    out = []
    for true, noise in parts:
        x = true[idx] + rng.standard_normal(idx.shape) * np.sqrt(noise[idx] / reps)
        out.append((x.mean(axis=1), x.std(axis=1, ddof=1) / np.sqrt(items)))
    return out


def _beyond(mean: np.ndarray, se: np.ndarray, q: float, threshold: float, above: bool) -> np.ndarray:
    """Whether each interval ``mean +/- q se`` lies wholly above (or below) ``threshold``."""
    return mean - q * se > threshold if above else mean + q * se < threshold


def _inside(mean: np.ndarray, se: np.ndarray, q: float, limit: float) -> np.ndarray:
    return (mean - q * se > -limit) & (mean + q * se < limit)


def _refine(need: _Need, design: tuple[int, int] | None, power: float) -> tuple[tuple[int, int] | None, float]:
    """The closed-form design, items added (8% a step) until the simulated chance of deciding reaches ``power``:
    the closed forms assume normal item values, and items whose SCs spread towards 0 or 1 are skewed."""
    if design is None or need.simulate is None:
        return design, np.nan
    items, reps = design
    chance = need.simulate(items, reps)
    for _ in range(40):
        if chance >= power or items >= _MAX_SEARCH_ITEMS:
            break
        items = min(int(np.ceil(items * 1.08)), _MAX_SEARCH_ITEMS)
        chance = need.simulate(items, reps)
    return (items, reps), chance


_SIMULATED = "; power refined by simulating the interval over the planning model's items (skewed item SCs)"


def _needs(cell: _Cell, config: AnalysisConfig, targets: PlanTargets) -> list[_Need]:
    """What each question asks of one model x dimension: the SC's half-width, Q1's shifts and item-score ICCs,
    Q3's retained share, Q4's gap and Q5's reflection SC (Q2 and Q5 pooled: :func:`_q2_needs`, :func:`_q5_needs`)."""
    ci, power, th = config.ci, targets.power, config.thresholds
    s0 = max(cell.sessions, 1)
    mom = cell.moments(s0, config.seed)
    out: list[_Need] = []

    def rng() -> np.random.Generator:
        return np.random.default_rng(config.seed + 1)

    def q(items: int) -> float:
        return float(stdtrit(items - 1, 0.5 + ci / 2))

    def sc_half(method: str, sessions: int = s0) -> Callable[[int, int], tuple[float, float, float]]:
        m = cell.moments(sessions, config.seed)
        return lambda items, reps: (t_half_width(np.sqrt(m.item_var(method, reps)), items, ci=ci), np.nan, np.nan)

    # SC of the implicit measure: an interval of the target half-width
    half = sc_half(_IMP)
    out.append(
        _Need(
            "SC",
            f"sc ({_IMP})",
            f"{_HALF} {targets.half_width:g}",
            mom.sc(_IMP),
            np.nan,
            s0,
            "closed form: t interval on the item-cluster variance (between-item + binomial / answers per item, "
            "Kish's design effect)",
            lambda m, r: half(m, r)[0] <= targets.half_width,
            half,
            check="sc",
        )
    )
    # Q4: the gap, an interval of the target half-width and one that clears the ROPE
    if _EXP in cell.methods:
        gap = mom.sc(_EXP) - mom.sc(_IMP)

        def gap_figures(items: int, reps: int) -> tuple[float, float, float]:
            sd = np.sqrt(mom.diff_var(_EXP, _IMP, reps))
            clear = (
                power_to_clear(abs(gap) - th.gap_rope, sd, items, ci=ci)
                if abs(gap) > th.gap_rope
                else tost_power(gap, sd, items, limit=th.gap_rope, ci=ci)
            )
            return t_half_width(sd, items, ci=ci), clear, _t_margin(sd, items, ci, power)

        def gap_simulated(items: int, reps: int) -> float:
            parts = [(mom.share(_EXP) - mom.share(_IMP), mom.noise(_EXP) + mom.noise(_IMP))]
            (mean, se), crit = _sample(parts, items, reps, rng())[0], q(items)
            if abs(gap) > th.gap_rope:
                hit = _beyond(mean, se, crit, np.sign(gap) * th.gap_rope, gap > 0)
            else:
                hit = _inside(mean, se, crit, th.gap_rope)
            return float(hit.mean())

        basis = "closed form: t interval on the item-cluster variance of the paired item gap"
        out.append(
            _Need(
                "Q4",
                "gap_explicit_implicit",
                f"{_HALF} {targets.half_width:g}",
                gap,
                th.gap_rope,
                s0,
                basis,
                lambda m, r: gap_figures(m, r)[0] <= targets.half_width,
                gap_figures,
                check="gap",
            )
        )
        on_edge = abs(abs(gap) - th.gap_rope) < 1e-3
        out.append(
            _Need(
                "Q4",
                "gap_explicit_implicit",
                f"{_DECIDE}, {power:.0%} power",
                gap,
                th.gap_rope,
                s0,
                basis
                + (
                    "; noncentral-t power of the bound beyond the ROPE"
                    if abs(gap) > th.gap_rope
                    else "; two one-sided tests inside the ROPE (Phillips 1990 approximation)"
                )
                + _SIMULATED,
                None if on_edge else (lambda m, r: gap_figures(m, r)[1] >= power),
                gap_figures,
                why=f"the assumed gap {gap:.2f} sits on the ROPE edge +/-{th.gap_rope:g}",
                check="gap",
                simulate=gap_simulated,
            )
        )
    # Q1: every wording and session shift equivalent within the limit (or one beyond it)
    s1 = max(2, s0)
    mom1 = cell.moments(s1, config.seed)
    imp = cell.methods[_IMP]
    pairs = [(1, i, j) for i, j in combinations(range(len(imp.wordings)), 2)]
    pairs += [(2, i, j) for i, j in combinations(range(s1), 2)]
    shifts = {p: mom1.pair(_IMP, *p, 1)[0] for p in pairs}
    limit = th.shift_limit
    beyond = [p for p in pairs if abs(shifts[p]) > limit]

    def q1_figures(items: int, reps: int) -> tuple[float, float, float]:
        sds = {p: np.sqrt(mom1.pair(_IMP, *p, reps)[1]) for p in pairs}
        worst = max(sds.values())
        if beyond:
            chance = max(power_to_clear(abs(shifts[p]) - limit, sds[p], items, ci=ci) for p in beyond)
        else:
            chance = float(np.prod([tost_power(shifts[p], sds[p], items, limit=limit, ci=ci) for p in pairs]))
        return t_half_width(worst, items, ci=ci), chance, _t_margin(worst, items, ci, power)

    def q1_simulated(items: int, reps: int) -> float:
        found = _sample([mom1.pair_items(_IMP, *p) for p in pairs], items, reps, rng())
        crit = q(items)
        beyond_any = np.any(
            [_beyond(m, e, crit, limit, True) | _beyond(m, e, crit, -limit, False) for m, e in found], 0
        )
        inside_all = np.all([_inside(m, e, crit, limit) for m, e in found], axis=0)
        return float((beyond_any | inside_all).mean())

    largest = max(shifts.values(), key=abs)
    edge = any(abs(abs(v) - limit) < 1e-3 for v in shifts.values())
    q1_note = "" if cell.sessions >= 2 else "test-retest needs a second session: planned with 2"
    out.append(
        _Need(
            "Q1",
            "form and session shifts",
            f"{_DECIDE}, {power:.0%} power",
            largest,
            limit,
            s1,
            (
                "two one-sided tests per pair (Phillips 1990), the pairs multiplied as if independent"
                if not beyond
                else "noncentral-t power of the shift beyond the limit"
            )
            + "; power refined by simulating every pair's interval jointly over the planning model's items",
            None if edge else (lambda m, r: q1_figures(m, r)[1] >= power),
            q1_figures,
            why=f"an assumed shift sits on the limit +/-{limit:g}",
            note=q1_note,
            check="shifts",
            extra={"pairs": pairs},
            simulate=q1_simulated,
        )
    )
    for axis, facet in ((2, "test_retest"), (1, "alternate_forms")):
        raters = s1 if axis == 2 else len(imp.wordings)
        per_target = len(imp.wordings) if axis == 2 else s1  # targets per item
        if raters < 2:
            continue
        rho = float(np.clip(mom1.icc(_IMP, axis, 1), 0.0, 0.99))

        def icc_figures(items: int, reps: int, axis=axis, raters=raters, per_target=per_target):
            rho_r = float(np.clip(mom1.icc(_IMP, axis, reps), 0.0, 0.99))
            return icc_interval_width(rho_r, raters, items * per_target, ci=ci) / 2, np.nan, np.nan

        out.append(
            _Need(
                "Q1",
                f"{facet} ICC(A,1)",
                f"{_HALF} {targets.icc_width / 2:g}",
                rho,
                np.nan,
                s1,
                f"closed form: Bonett (2002) with {raters} raters (shown, does not decide)",
                lambda m, r, f=icc_figures: f(m, r)[0] <= targets.icc_width / 2,
                icc_figures,
                note=f"targets are items x {'wordings' if axis == 2 else 'sessions'}; "
                f"{icc_sample_size(rho, raters, targets.icc_width, ci=ci):.0f} targets at the assumed ICC",
            )
        )
    # Q3: R estimable (the implicit SC clear of the chance band) and its interval clear of the threshold
    if _ABL in cell.methods:
        b = mom.sc(_IMP) - 0.5
        a = mom.sc(_ABL) - 0.5
        ratio = a / b if b else np.nan

        def q3_figures(items: int, reps: int) -> tuple[float, float, float]:
            va, vb, cov = mom.item_var(_ABL, reps), mom.item_var(_IMP, reps), mom.cov(_ABL, _IMP)
            estimable = power_to_clear(abs(b) - th.chance_margin, np.sqrt(vb), items, ci=ci)
            theta = th.retained_share
            clears = power_to_clear(
                abs(a - theta * b), np.sqrt(max(va - 2 * theta * cov + theta**2 * vb, 0.0)), items, ci=ci
            )
            q = stdtrit(items - 1, 0.5 + ci / 2)
            half = fieller_half_width(a, b, va / items, vb / items, cov / items, quantile=q, margin=th.chance_margin)
            return half, estimable * clears, _t_margin(np.sqrt(vb), items, ci, power)

        def q3_simulated(items: int, reps: int) -> float:
            theta = th.retained_share
            parts = [
                (mom.share(_IMP) - 0.5, mom.noise(_IMP)),
                (mom.share(_ABL) - 0.5 - theta * (mom.share(_IMP) - 0.5), mom.noise(_ABL) + theta**2 * mom.noise(_IMP)),
            ]
            (b_mean, b_se), (l_mean, l_se) = _sample(parts, items, reps, rng())
            crit = q(items)
            estimable = _beyond(b_mean, b_se, crit, th.chance_margin, True) | _beyond(
                b_mean, b_se, crit, -th.chance_margin, False
            )
            clears = _beyond(l_mean, l_se, crit, 0.0, True) | _beyond(l_mean, l_se, crit, 0.0, False)
            return float((estimable & clears).mean())

        why = (
            f"the assumed implicit SC {b + 0.5:.2f} lies within the chance band 0.5 +/- {th.chance_margin:g}"
            if abs(b) <= th.chance_margin
            else f"the assumed R {ratio:.2f} sits on the threshold {th.retained_share:g}"
        )
        plannable = abs(b) > th.chance_margin and abs(ratio - th.retained_share) > 1e-3
        out.append(
            _Need(
                "Q3",
                "ablation_retained_share",
                f"{_DECIDE}, {power:.0%} power",
                ratio,
                th.retained_share,
                s0,
                "Fieller's interval's expected half-width (quadrature over the two SCs' estimates); its clearing the "
                "threshold is the t test of SC_abl - 0.5 - threshold x (SC_imp - 0.5); power simulated jointly with "
                "the implicit SC clearing the chance band over the planning model's items",
                (lambda m, r: q3_figures(m, r)[1] >= power) if plannable else None,
                q3_figures,
                why=why,
                note="margin: the implicit SC's distance from the chance band needed for R to be estimable",
                check="ratio",
                simulate=q3_simulated,
            )
        )
    # Q5: the reflection SC's interval clear of 0.5
    if _REF in cell.methods:
        ref = mom.sc(_REF)

        def q5_figures(items: int, reps: int) -> tuple[float, float, float]:
            sd = np.sqrt(mom.item_var(_REF, reps))
            return (
                t_half_width(sd, items, ci=ci),
                power_to_clear(abs(ref - 0.5), sd, items, ci=ci),
                _t_margin(sd, items, ci, power),
            )

        out.append(
            _Need(
                "Q5",
                "sc_reflection",
                f"{_DECIDE}, {power:.0%} power",
                ref,
                0.5,
                s0,
                "closed form: noncentral-t power of the item-cluster interval's bound beyond 0.5" + _SIMULATED,
                (lambda m, r: q5_figures(m, r)[1] >= power) if abs(ref - 0.5) > 1e-3 else None,
                q5_figures,
                why=f"the assumed reflection SC {ref:.2f} sits on 0.5",
                check=Method.REFLECTION.value,
                simulate=lambda m, r: _sc_simulated([(mom, rng(), 1.0)], m, r, ref, ci),
            )
        )
    return out


def _sc_simulated(
    sources: list[tuple[_Moments, np.random.Generator, float]], items: int, reps: int, sc: float, ci: float
) -> float:
    """Chance that the reflection SC's interval over ``items`` items of each source (dimension, with the answers one
    of its items carries as weight) clears 0.5: the pooled SC weighs items by their answers, as the question's
    pooled counts do, and its standard error is the linearised cluster one the item-cluster bootstrap estimates."""
    values, weights = [], []
    for mom, rng, weight in sources:
        idx = rng.integers(mom.share(_REF).size, size=(_POWER_SIMULATIONS, items))
        noise = np.sqrt(mom.noise(_REF)[idx] / reps)
        values.append(mom.share(_REF)[idx] + rng.standard_normal(idx.shape) * noise)
        weights.append(np.full(idx.shape, weight))
    x, w = np.concatenate(values, axis=1), np.concatenate(weights, axis=1)
    n = x.shape[1]
    mean = (w * x).sum(axis=1) / w.sum(axis=1)
    se = np.sqrt(n / (n - 1) * ((w * (x - mean[:, None])) ** 2).sum(axis=1)) / w.sum(axis=1)
    return float(_beyond(mean, se, float(stdtrit(n - 1, 0.5 + ci / 2)), 0.5, sc > 0.5).mean())


def _q2_needs(cells: list[_Cell], config: AnalysisConfig, targets: PlanTargets) -> list[tuple[_Need, list[_Cell]]]:
    """Q2 per model and deciding pair: the pooled within-dimension correlation's Fisher-z interval clear of 0 (or
    wholly below the floor), the correlation attenuated by the implicit item scores' reliability at the design."""
    ci, power, floor = config.ci, targets.power, config.thresholds.convergent_r
    out = []
    models = dict.fromkeys(c.model for c in cells)
    for model in models:
        mine = [c for c in cells if c.model == model]
        for score in (_LOG, _EMB):
            have = [c for c in mine if score in c.scores]
            if not have:
                continue
            g = len(have)
            s0 = max(have[0].sessions, 1)

            def r_at(reps: int, have=have, score=score, s0=s0) -> float:
                pearson = np.mean([c.moments(s0, config.seed).correlation(_IMP, score, reps) for c in have])
                return spearman_from_pearson(float(pearson))  # Q2 correlates ranks

            def figures(items: int, reps: int, g=g, r_at=r_at) -> tuple[float, float, float]:
                r = r_at(reps)
                half = fisher_z_half_width(r, items * g, ci=ci, variance_factor=_SPEARMAN_FACTOR, groups=g)
                chance = fisher_z_power(
                    r, _nearest(r, floor), items * g, ci=ci, variance_factor=_SPEARMAN_FACTOR, groups=g
                )
                return half, chance, np.nan

            r1 = r_at(1)
            bounds = _q2_boundaries(r1, floor)
            out.append(
                (
                    _Need(
                        "Q2",
                        f"{_IMP}~{score}",
                        f"{_DECIDE}, {power:.0%} power",
                        r1,
                        floor,
                        s0,
                        f"closed form: Fisher z with Spearman's variance {_SPEARMAN_FACTOR}/(n - g - 2) over the "
                        f"model's {g} dimension(s); the correlation attenuated by the implicit item SCs' "
                        "reliability, as Spearman's of a bivariate normal (Kruskal 1958)",
                        (
                            lambda m, r, g=g, r_at=r_at: (
                                _q2_items(r_at(r), _nearest(r_at(r), floor), ci, power, g) <= m * g
                            )
                        )
                        if bounds
                        else None,
                        figures,
                        why="the assumed correlation sits on the decision boundaries",
                        check="correlation",
                        extra={"score": score},
                    ),
                    have,
                )
            )
    return out


def _q5_needs(cells: list[_Cell], config: AnalysisConfig, targets: PlanTargets) -> list[tuple[_Need, list[_Cell]]]:
    """Q5 per model, the verdict the question decides on: the reflection SC pooled over the model's dimensions, its
    item-cluster interval (over every item of them) clear of 0.5."""
    ci, power = config.ci, targets.power
    out = []
    for model in dict.fromkeys(c.model for c in cells):
        have = [c for c in cells if c.model == model and _REF in c.methods]
        if not have:
            continue
        s0 = max(have[0].sessions, 1)
        moments = [c.moments(s0, config.seed) for c in have]
        weights = np.array([len(c.methods[_REF].wordings) for c in have], dtype=float)  # answers per item
        scs = np.array([m.sc(_REF) for m in moments])
        sc = float(weights @ scs / weights.sum())
        g = len(have)

        def figures(
            items: int, reps: int, moments=moments, weights=weights, scs=scs, sc=sc, g=g
        ) -> tuple[float, float, float]:
            spread = np.array([m.item_var(_REF, reps) for m in moments]) + (scs - sc) ** 2
            # the weighted mean's variance over the items, as one item's SD over items * g items
            sd = np.sqrt(g * (weights**2 @ spread) / weights.sum() ** 2)
            n = items * g
            return t_half_width(sd, n, ci=ci), power_to_clear(abs(sc - 0.5), sd, n, ci=ci), _t_margin(sd, n, ci, power)

        need = _Need(
            "Q5",
            "sc_reflection",
            f"{_DECIDE}, {power:.0%} power",
            sc,
            0.5,
            s0,
            f"closed form: noncentral-t power of the item-cluster interval's bound beyond 0.5, items of the model's "
            f"{g} dimension(s) pooled and weighed by their answers, as the pooled SC is (their SCs' spread counted "
            "as between-item variance)" + _SIMULATED,
            (lambda m, r, f=figures: f(m, r)[1] >= power) if abs(sc - 0.5) > 1e-3 else None,
            figures,
            why=f"the assumed reflection SC {sc:.2f} sits on 0.5",
            check=Method.REFLECTION.value,
            simulate=lambda m, r, moments=moments, weights=weights, sc=sc: _sc_simulated(
                [
                    (mo, np.random.default_rng(config.seed + 1 + k), w)
                    for k, (mo, w) in enumerate(zip(moments, weights, strict=True))
                ],
                m,
                r,
                sc,
                ci,
            ),
        )
        out.append((need, have))
    return out


def _q2_boundaries(r: float, floor: float) -> list[float]:
    """The boundaries an interval around ``r`` could clear to decide Q2: above 0 (convergent), below the floor."""
    return [b for b, side in ((0.0, r > 0), (floor, r < floor)) if side and abs(r - b) > 1e-3]


def _nearest(r: float, floor: float) -> float:
    """The boundary needing the fewest items (the decision the assumed correlation reaches first)."""
    return max(_q2_boundaries(r, floor) or [0.0], key=lambda b: abs(np.arctanh(r) - np.arctanh(b)))


def _q2_items(r: float, boundary: float, ci: float, power: float, groups: int) -> float:
    return fisher_z_sample_size(
        float(np.clip(r, -0.99, 0.99)),
        boundary,
        ci=ci,
        power=power,
        variance_factor=_SPEARMAN_FACTOR,
        groups=groups,
    )
