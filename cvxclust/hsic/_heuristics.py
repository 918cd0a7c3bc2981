r"""The non-SDP optimizers of CLUHSIC (2.3)/(2.4): greedy local search
(:mod:`~cvxclust.hsic._greedy`), the spectral relaxation (Proposition 2) and the
concave-convex procedure (4.16)-(4.17) (:mod:`~cvxclust.hsic._spectral`), and the NMF
baseline (:mod:`~cvxclust.hsic._nmf`); their shared pieces are in
:mod:`~cvxclust.hsic._heuristic_base`.

All of them maximize

.. math:: f(P) = \operatorname{tr}(K P A P^\top),\qquad P = \Pi \ \text{(2.3)}\quad\text{or}\quad
          P = \Pi(\Pi^\top\Pi)^{-1/2}\ \text{(2.4)},

for an input kernel K (m x m, centred by the caller: nothing here centres it) and an output
kernel A (c x c) on the clusters, or a relaxation of it, and return a :class:`~cvxclust.Result`
whose ``X`` is the partition matrix of the returned labels (normalized as (2.4) or not as
(2.3), as asked) and ``objective`` its f, so results of different methods compare directly.
Their ``extras`` are

* ``"labels"``: the cluster of each point, ``0..c-1`` (column k of X is cluster k of A);
* ``"P"``: the continuous iterate of the method (spectral, CCCP, NMF), or X (greedy);
* ``"relaxed_objective"``: the value of ``P`` for the problem the method optimizes (4.13 for
  spectral and CCCP, the shifted-kernel objective for NMF), None for greedy.

None of them certifies a maximum: the status is ``"converged"`` when the method's own stopping
rule was met, else ``"max_iter"`` or ``"time_limit"`` with a ``ConvergenceWarning``; there is no
dual bound.  Section 6.1.2 of the paper compares greedy and NMF (Table 1) with the SDP
relaxations; the spectral relaxation and CCCP are shown (Section 4) to reduce to the spectral
relaxation of k-means (4.15), A playing no part.

Semi-supervised use (Section 6): ``known`` is an int array of length m with ``-1`` for an unknown
point and its fixed label otherwise; greedy and NMF never move the known points.

Reference: W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the
CLUHSIC Algorithm", SIAM International Conference on Data Mining (SDM), 2010.
"""

from ._greedy import greedy
from ._nmf import nmf
from ._spectral import cccp, spectral

__all__ = ["cccp", "greedy", "nmf", "spectral"]
