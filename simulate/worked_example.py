"""The README's worked example: a small simulated study of base and tuned models at two sizes, worded incompletely.

Run ``python -m bias_validity.simulate.worked_example FOLDER`` to write ``worked_example.csv`` (the
responses table) and ``worked_example_models.csv`` (its models file) into FOLDER, then ``bias-validity report
FOLDER/worked_example.csv --models-file FOLDER/worked_example_models.csv --no-fit --out report.html``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from bias_validity.probes.schema import Method, validate_responses
from bias_validity.simulate.responses import simulate_responses

__all__ = ["TRUTH", "RESPONSES_FILE", "MODELS_FILE", "worked_example", "worked_example_models", "write_worked_example"]

_IMP, _ABL, _EXP, _REF = Method.IMPLICIT.value, Method.ABLATED.value, Method.EXPLICIT.value, Method.REFLECTION.value
#: Per model: parameters, whether tuned (aligned), and the true SC of each sampled method. Tuning leaves the implicit
#: SC as it is and lowers the explicit one, more so at 8B; the tuned models follow an instruction not to rely on
#: stereotypes (ablated SC near chance) and disown their own stereotypical answers; the base models do neither.
TRUTH: dict[str, dict[str, object]] = {
    "sim:base-1b": dict(parameters="1B", aligned=False, sc={_IMP: 0.7, _ABL: 0.7, _EXP: 0.93, _REF: 0.85}),
    "sim:tuned-1b": dict(parameters="1B", aligned=True, sc={_IMP: 0.7, _ABL: 0.52, _EXP: 0.7, _REF: 0.3}),
    "sim:base-8b": dict(parameters="8B", aligned=False, sc={_IMP: 0.8, _ABL: 0.8, _EXP: 0.97, _REF: 0.9}),
    "sim:tuned-8b": dict(parameters="8B", aligned=True, sc={_IMP: 0.8, _ABL: 0.52, _EXP: 0.15, _REF: 0.15}),
}
DIMENSIONS = ("age", "race", "gender_career")
RESPONSES_FILE = "worked_example.csv"
MODELS_FILE = "worked_example_models.csv"
_ITEMS = 10
_SECOND_FORM = "-2"  # the synonym wording: template ``<method>-2``, asked on the second half of the items only


def worked_example(seed: int = 0) -> pd.DataFrame:
    """The worked example's responses table: four models, three dimensions, ten items, one session.

    Every method is simulated (:func:`bias_validity.simulate.simulate_responses`, item SD 1.2,
    four repetitions, balanced explicit items); the design is incomplete: the second wording of the sampled
    methods (``implicit-2``, ``ablated-2`` and the reflections on ``implicit-2``) covers items 6-10 only, and
    there is one session.

    Parameters
    ----------
    seed : int
        Seed of the first model's draws (model ``i`` of :data:`TRUTH` uses ``seed + i``).

    Returns
    -------
    pandas.DataFrame
        The validated responses table.

    Examples
    --------
    >>> t = worked_example()
    >>> t.groupby("model").size().to_dict()
    {'sim:base-1b': 2733, 'sim:base-8b': 2733, 'sim:tuned-1b': 2733, 'sim:tuned-8b': 2733}
    >>> sorted(t.loc[t["template_id"] == "implicit-2", "item_id"].str[-2:].unique())
    ['06', '07', '08', '09', '10']
    """
    parts = [
        simulate_responses(
            models=[model],
            dimensions=DIMENSIONS,
            n_items=_ITEMS,
            n_templates=2,
            sessions=1,
            reps=4,
            sc=spec["sc"],
            item_sd=1.2,
            seed=seed + i,
        )
        for i, (model, spec) in enumerate(TRUTH.items())
    ]
    table = pd.concat(parts, ignore_index=True)
    first_half = table["item_id"].isin([f"{d}-{i:02d}" for d in DIMENSIONS for i in range(1, _ITEMS // 2 + 1)])
    second_form = table["template_id"].str.endswith(_SECOND_FORM) & table["method"].isin([_IMP, _ABL, _REF])
    return validate_responses(table[~(first_half & second_form)].reset_index(drop=True), source="worked_example")


def worked_example_models() -> pd.DataFrame:
    """The worked example's models file: one family, sizes 1B and 8B, equal training tokens, base and tuned.

    Returns
    -------
    pandas.DataFrame
        One row per model of :data:`TRUTH`: ``model``, ``family``, ``parameters``, ``training_tokens``, ``aligned``.

    Examples
    --------
    >>> worked_example_models()[["model", "parameters", "aligned"]].to_numpy().tolist()[:2]
    [['sim:base-1b', '1B', 'no'], ['sim:tuned-1b', '1B', 'yes']]
    """
    return pd.DataFrame(
        [
            dict(
                model=m,
                family="sim",
                parameters=spec["parameters"],
                training_tokens="2T",
                aligned="yes" if spec["aligned"] else "no",
            )
            for m, spec in TRUTH.items()
        ]
    )


def write_worked_example(folder: str | Path, seed: int = 0) -> tuple[Path, Path]:
    """Write the responses table and the models file into ``folder``.

    Parameters
    ----------
    folder : str or Path
        Where to write :data:`RESPONSES_FILE` and :data:`MODELS_FILE` (created if missing).
    seed : int
        Passed to :func:`worked_example`.

    Returns
    -------
    tuple of Path
        The responses table's path and the models file's.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    responses, models = folder / RESPONSES_FILE, folder / MODELS_FILE
    table = worked_example(seed)
    table.to_csv(responses, index=False, float_format="%.6g")
    header = "# The README's worked example (python -m bias_validity.simulate.worked_example)\n"
    models.write_text(header + worked_example_models().to_csv(index=False), encoding="utf-8")
    return responses, models


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="where to write the responses table and the models file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for path in write_worked_example(args.folder, args.seed):
        print(path)


if __name__ == "__main__":
    main()
