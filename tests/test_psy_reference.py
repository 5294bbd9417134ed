"""Human IAT reference table as shipped, and rank agreement against it."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bias_validity.psychometrics.reference import compare_to_human, human_iat_reference


def test_reference_table_holds_published_figures():
    """Charlesworth & Banaji (2019) Table 1: e.g. race IAT n = 1,851,445, D = 0.32, SD = 0.44, d = 0.71."""
    ref = human_iat_reference().set_index("iat")
    assert len(ref) == 7
    assert ref.loc["race", ["n", "implicit_D_mean", "implicit_D_sd", "implicit_cohen_d"]].tolist() == [
        1851445,
        0.32,
        0.44,
        0.71,
    ]
    # d = D / SD up to the table's rounding
    np.testing.assert_allclose(ref["implicit_D_mean"] / ref["implicit_D_sd"], ref["implicit_cohen_d"], atol=0.03)
    assert "Charlesworth" in human_iat_reference().attrs["source"]


def test_compare_to_human_with_custom_mapping_matches_scipy():
    llm = pd.DataFrame({"dimension": ["a", "b", "c", "d", "e"], "effect": [0.5, 0.1, 0.9, 0.3, 0.7]})
    mapping = {"a": "sexuality", "b": "race", "c": "age", "d": "disability", "e": "body_weight_faces"}
    out = compare_to_human(llm, dimension="dimension", effect="effect", mapping=mapping, n_resamples=200, seed=0)
    human = [0.60, 0.71, 1.12, 1.13, 0.95]
    rho = stats.spearmanr(llm["effect"], human).statistic
    tau = stats.kendalltau(llm["effect"], human).statistic
    assert out.loc[out["method"] == "spearman", "r"].iloc[0] == pytest.approx(rho)
    assert out.loc[out["method"] == "kendall", "r"].iloc[0] == pytest.approx(tau)
    assert out["n"].iloc[0] == 5 and out.attrs["unmatched"] == []


def test_compare_to_human_refuses_too_few_matches_and_unknown_iat():
    llm = pd.DataFrame({"dimension": ["age", "science"], "effect": [0.5, 0.1]})
    with pytest.raises(ValueError, match="needs at least 3 dimensions with a human IAT"):
        compare_to_human(llm, dimension="dimension", effect="effect")
    with pytest.raises(ValueError, match=r"mapping names IATs \['gender'\]"):
        compare_to_human(llm, dimension="dimension", effect="effect", mapping={"age": "gender"})
    with pytest.raises(ValueError, match="valid choices are implicit_D_mean, implicit_cohen_d"):
        compare_to_human(llm, dimension="dimension", effect="effect", human="d")
