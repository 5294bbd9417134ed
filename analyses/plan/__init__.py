"""Plan a study that decides: from a pilot study (or stated assumptions) to the design each question needs.

The planning model is the one the questions' intervals are built for: per model x dimension x method, an answer is
consistent with probability ``expit(mean + u_item + v_wording + w_item,wording + s_session + e_item,session)``, items
random (the item-cluster intervals generalise to the dimension's items), wordings and sessions fixed. A pilot gives
its parameters by the method of moments (:func:`plan`, Notes); stated assumptions give them directly
(:class:`Assumptions`). From them each question's deciding figure is planned forward with the closed forms of
:mod:`bias_validity.psychometrics.planning`, and ``check=True`` draws studies at the planned design and runs the
same estimators the questions run (:func:`bias_validity.analyses.study.sc_interval`,
:func:`~bias_validity.analyses.study.sc_difference`, :func:`bias_validity.psychometrics.forms.form_shifts`,
:func:`bias_validity.psychometrics.validity.convergent_validity`,
:func:`bias_validity.psychometrics.framing.ablation_retained_share`) with the questions' verdict rules.

Its modules, one job each: :mod:`~bias_validity.analyses.plan.model` (the planning model),
:mod:`~bias_validity.analyses.plan.pilot` (its parameters from a pilot or from assumptions),
:mod:`~bias_validity.analyses.plan.search` (the cheapest design meeting a requirement),
:mod:`~bias_validity.analyses.plan.needs` (each question's requirement), :mod:`~bias_validity.analyses.plan.table`
(:func:`plan` and :func:`plan_summary`) and :mod:`~bias_validity.analyses.plan.check` (the simulation check).
"""

from __future__ import annotations

from bias_validity.analyses.plan.check import CHECK_MAX_ANSWERS
from bias_validity.analyses.plan.table import PLAN_COLUMNS, plan, plan_summary
from bias_validity.psychometrics.planning import Assumptions, PlanTargets

__all__ = ["CHECK_MAX_ANSWERS", "PLAN_COLUMNS", "PlanTargets", "Assumptions", "plan", "plan_summary"]
