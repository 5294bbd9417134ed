"""What an interval is: one label per construction, stamped by the function that computes it.

Every interval function of this package records its kind in the result (``attrs["interval"]`` of a DataFrame, the
``kind`` column where rows hold intervals of different kinds, as in
:func:`bias_validity.psychometrics.validity.correlation_ci`, the ``kind`` of a
:class:`bias_validity.psychometrics.clustered.ClusterInterval`); figures carry it in their ``interval`` column and
verdict rules compare against these members, never against typed strings.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["IntervalKind"]


class IntervalKind(StrEnum):
    """The construction of an interval, as figures and reports name it."""

    WILSON = "Wilson"  #: Wilson (1927) score interval of a proportion; answers independent
    CLOPPER_PEARSON = "Clopper-Pearson"  #: exact binomial interval (Clopper & Pearson 1934)
    WILSON_DESIGN_EFFECT = "Wilson, item-cluster design effect"  #: Wilson on the effective n (Kish design effect)
    NEWCOMBE = "Newcombe"  #: Newcombe (1998) hybrid score interval of a difference of proportions
    AGRESTI_CAFFO = "Agresti-Caffo"  #: Agresti & Caffo (2000) adjusted Wald interval of a difference
    WALD_CLUSTER = "Wald, item-cluster robust (shared items paired)"  #: cluster-robust Wald interval of a shift
    ITEM_CLUSTER_T = "item-cluster bootstrap, t-corrected"  #: items resampled; SE rescaled, t critical value
    ANSWER_BOOTSTRAP_T = "answer bootstrap, t-corrected"  #: answers resampled; SE rescaled, t critical value
    #: Fieller's interval of a ratio, (co)variances from the item-cluster bootstrap, rescaled, t critical value
    FIELLER_ITEM_CLUSTER = "Fieller, item-cluster bootstrap covariance, t-corrected"
    #: Fieller's interval of a ratio, (co)variances from the answer bootstrap, rescaled, t critical value
    FIELLER_ANSWER = "Fieller, answer bootstrap covariance, t-corrected"
    PERCENTILE = "percentile bootstrap"  #: Efron's percentile interval
    BCA = "BCa bootstrap"  #: bias-corrected and accelerated bootstrap (Efron 1987)
    BASIC = "basic bootstrap"  #: the basic (reverse percentile) bootstrap
    FISHER_Z = "Fisher z"  #: Fisher's z transform of a correlation
    ICC_F = "F-test (McGraw-Wong)"  #: McGraw & Wong (1996) F-based interval of an ICC
    FELDT = "F-test (Feldt)"  #: Feldt (1965) F-based interval of Cronbach's alpha
    WALD = "Wald, asymptotic SE"  #: estimate +/- z * its asymptotic standard error (e.g. Cohen's kappa)
    OLS_T = "t, OLS SE"  #: Student's t with the ordinary-least-squares standard error
    MOVER = "MOVER (Zou & Donner)"  #: method of variance estimates recovery for a difference of two estimates
    HDI = "HDI"  #: highest-density interval of a posterior
