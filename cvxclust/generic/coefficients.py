"""cvxpy's own reading of an affine expression of the variable: its coefficients on ``vec(X)``,
from the expression's linear-operator tree by cvxpy's coefficient backend (the reader's path for
the expressions :mod:`cvxclust.generic.expression_reader` does not recognise)."""

from __future__ import annotations

import inspect

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

__all__ = ["CVXPY_VERSIONS", "linear_map", "symmetric_identity", "symmetrize_columns"]


def linear_map(expr, X: cp.Variable) -> tuple[sp.csr_matrix, np.ndarray]:
    """The coefficients of an affine expression of X: ``(A, b)`` with ``vec(expr) = A vec(X) + b``
    in cvxpy's (column-major) order; A is sparse of shape ``(expr.size, X.size)``.

    Read by cvxpy's linear-operator backend from the expression's linear-operator tree alone:
    no cone program is built.
    """
    size, N = expr.size, X.size
    tensor = _problem_matrix([expr.canonical_form[0]], N, {X.id: 0}, {-1: 1}, {-1: 0}, size).tocoo()
    column, row = np.divmod(tensor.row, size)
    on_x = column < N
    A = sp.csr_matrix((tensor.data[on_x], (row[on_x], column[on_x])), shape=(size, N))
    b = np.zeros(size)
    np.add.at(b, row[~on_x], tensor.data[~on_x])
    return A, b


#: the cvxpy versions whose internal ``canonInterface.get_problem_matrix`` the reader is tested with
#: (the requirement of pyproject.toml)
CVXPY_VERSIONS = ">=1.5,<1.10"


def _problem_matrix(*args):
    """cvxpy's internal ``cvxpy.cvxcore.python.canonInterface.get_problem_matrix`` (its affine
    coefficient backend), or an ImportError naming the installed cvxpy where it is missing or
    takes other arguments."""
    try:
        from cvxpy.cvxcore.python import canonInterface

        get_problem_matrix = canonInterface.get_problem_matrix
    except (ImportError, AttributeError) as error:
        problem = f"does not have it ({error})"
    else:
        try:
            inspect.signature(get_problem_matrix).bind(*args)
        except TypeError as error:
            problem = f"gives it other arguments ({error})"
        else:
            return get_problem_matrix(*args)
    raise ImportError(
        f"cvxclust reads affine expressions with cvxpy's internal canonInterface.get_problem_matrix, and "
        f"cvxpy {cp.__version__} {problem}: install a cvxpy of the tested versions, cvxpy{CVXPY_VERSIONS}")


def symmetrize_columns(A: sp.spmatrix, n: int) -> sp.csr_matrix:
    """``A`` acting on symmetric matrices: each row ``a`` becomes ``(a + a^T) / 2`` (as n x n)."""
    transposed = np.arange(n * n).reshape(n, n).T.ravel()
    A = sp.csr_matrix(A)
    return sp.csr_matrix((A + A[:, transposed]) * 0.5)


def symmetric_identity(n: int) -> sp.csr_matrix:
    """The identity map of symmetric matrices on vec(X): ``(I + transpose) / 2``."""
    return symmetrize_columns(sp.identity(n * n, format="csr"), n)
