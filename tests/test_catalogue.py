"""The problem catalogue: every shipped file loads, and bad files fail naming file and key."""

from __future__ import annotations

import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

from cvxclust import Relaxation
from cvxclust.cli import Instance, find_problem_files, load_instance
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
SHIPPED = sorted(PROBLEMS.glob("*.toml"))

GOOD = """\
name = "tiny"
relaxation = "ssc.FrobeniusDS"

[data]
dataset = "iris"
n_samples = 12

[kernel]
kind = "rbf"
"""


def write(tmp_path, text: str, name: str = "problem.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- the shipped catalogue ---------------------------------------------------------------------
def test_catalogue_is_shipped():
    assert len(SHIPPED) >= 6
    assert find_problem_files([PROBLEMS]) == SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_problem_loads(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the files use today's keys
        inst = load_instance(path)
    assert isinstance(inst, Instance)
    assert isinstance(inst.relaxation, Relaxation)
    assert inst.path == path and inst.name and inst.description
    registered = [m for m in inst.relaxation.methods() if m != "reference"]
    assert inst.methods and set(inst.methods) <= set(registered)
    kw = inst.validate_kwargs
    assert kw["reference_solver"] in ("CLARABEL", "SCS")
    assert 0 < kw["objective_tol"] <= 1e-4 and 0 < kw["residual_tol"] <= 1e-4
    if hasattr(inst.relaxation, "K"):
        K = inst.relaxation.K
        assert K.shape[0] <= 100 and np.allclose(K, K.T)
    else:  # a relaxation of the data themselves (bregman)
        assert inst.relaxation.X.shape[0] <= 100


def test_shipped_names_are_unique():
    names = [load_instance(p).name for p in SHIPPED]
    assert len(set(names)) == len(names)


def test_shipped_catalogue_covers_fsc_and_ssc_on_three_datasets_the_cluhsic_sdp_and_bregman():
    from cvxclust.bregman import ConditionalJC
    from cvxclust.cluhsic import CLUHSICSDP

    instances = list(map(load_instance, SHIPPED))
    seen = [(type(inst.relaxation), inst.relaxation.n) for inst in instances if hasattr(inst.relaxation, "n")]
    assert sorted(n for c, n in seen if c is FrobeniusDS) == [60, 60, 80]
    assert sorted(n for c, n in seen if c is FrobeniusPSD) == [60, 60, 60]
    sdp = [inst.relaxation for inst in instances if isinstance(inst.relaxation, CLUHSICSDP)]
    assert sorted((r.m, r.c) for r in sdp) == [(12, 3), (15, 3)]
    cjc = {inst.relaxation.divergence.name: inst for inst in instances if isinstance(inst.relaxation, ConditionalJC)}
    assert sorted(cjc) == ["euclidean", "kl"]
    assert cjc["euclidean"].methods == ["admm", "davis-yin"] and cjc["kl"].methods == ["admm"]


PSD_INSTANCES = [p for p in SHIPPED if "relaxation = \"ssc.FrobeniusPSD\"" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", PSD_INSTANCES, ids=[p.stem for p in PSD_INSTANCES])
def test_shipped_sdp_instances_need_the_cone(path):
    """Where the nearest doubly stochastic matrix is already p.s.d. the cone is inactive: the
    SDP is the QP, solved in one iteration, and validating it tests nothing of the cone."""
    K = load_instance(path).relaxation.K
    qp = FrobeniusDS(K).solve("dual-newton")
    assert np.linalg.eigvalsh(qp.X)[0] < -1e-2  # the cone-free solution is not p.s.d. (so the cone moves it)
    sdp = FrobeniusPSD(K).solve("dual-newton", tol=1e-7, residual_tol=1e-7)
    assert sdp.status == "optimal" and sdp.iterations > 10


# -- what a file sets ----------------------------------------------------------------------
def test_defaults(tmp_path):
    inst = load_instance(write(tmp_path, GOOD))
    assert inst.name == "tiny" and inst.description == ""
    assert isinstance(inst.relaxation, FrobeniusDS) and inst.relaxation.n == 12
    assert inst.methods == [m for m in FrobeniusDS.methods() if m != "reference"]
    assert inst.validate_kwargs == {
        "reference_solver": None,  # chosen by size
        "reference_options": {},
        "method_options": {},
        "objective_tol": 1e-6,
        "residual_tol": 1e-6,
        "solution_tol": None,
    }


def test_every_setting_is_read(tmp_path):
    text = GOOD.replace('kind = "rbf"', 'kind = "rbf"\ndelta = 2.5') + """
[validate]
methods = ["admm"]
reference_solver = "scs"
objective_tol = 1e-4
residual_tol = 1e-5
solution_tol = 1e-2

[options.admm]
tol = 1e-9

[options.reference]
eps = 1e-8
"""
    inst = load_instance(write(tmp_path, text.replace("n_samples = 12", "n_samples = 12\nstandardize = true")))
    assert inst.methods == ["admm"]
    assert inst.validate_kwargs == {
        "reference_solver": "SCS",
        "reference_options": {"eps": 1e-8},
        "method_options": {"admm": {"tol": 1e-9}},
        "objective_tol": 1e-4,
        "residual_tol": 1e-5,
        "solution_tol": 1e-2,
    }
    from sklearn.preprocessing import StandardScaler

    from cvxclust.datasets import load_dataset
    from cvxclust.kernels import rbf

    X, _ = load_dataset("iris", 12)
    np.testing.assert_allclose(inst.relaxation.K, rbf(StandardScaler().fit_transform(X), delta=2.5))


@pytest.mark.parametrize("old, new", [("tol_objective", "objective_tol"), ("tol_residual", "residual_tol"),
                                      ("tol_solution", "solution_tol")])
def test_old_tolerance_keys_still_read_with_a_future_warning(tmp_path, old, new):
    path = write(tmp_path, GOOD + f"\n[validate]\n{old} = 1e-3\n")
    with pytest.warns(FutureWarning, match=rf"validate\.{old}' is renamed 'validate\.{new}'") as record:
        inst = load_instance(path)
    assert str(path) in str(record[0].message)
    assert inst.validate_kwargs[new] == 1e-3 and old not in inst.validate_kwargs
    both = write(tmp_path, GOOD + f"\n[validate]\n{old} = 1e-3\n{new} = 1e-3\n", "both.toml")
    with pytest.raises(ValueError, match=rf"key 'validate\.{old}'.*keep validate\.{new} alone"):
        load_instance(both)


def test_run_validates(tmp_path):
    inst = load_instance(write(tmp_path, GOOD))
    report = inst.run(["admm"])
    assert report.name == "tiny" and [c.method for c in report.comparisons] == ["admm"]
    assert report.passed


# -- bad files ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "old, new, key",
    [
        ('relaxation = "ssc.FrobeniusDS"', 'relaxation = "ssc.Nope"', "relaxation"),
        ('relaxation = "ssc.FrobeniusDS"', 'relaxation = "nofamily.Thing"', "relaxation"),
        ('relaxation = "ssc.FrobeniusDS"', 'relaxation = "FrobeniusDS"', "relaxation"),
        ('relaxation = "ssc.FrobeniusDS"', 'relaxation = "ssc.project_row_sums"', "relaxation"),
        ('relaxation = "ssc.FrobeniusDS"', "", "relaxation"),
        ('name = "tiny"', "", "name"),
        ('name = "tiny"', "name = 3", "name"),
        ('name = "tiny"', 'name = "  "', "name"),
        ('dataset = "iris"', 'dataset = "mnist"', "data.dataset"),
        ('dataset = "iris"', "", "data.dataset"),
        ("n_samples = 12", "n_samples = 1", "data"),
        ("n_samples = 12", 'n_samples = "12"', "data.n_samples"),
        ("n_samples = 12", "n_sample = 12", "data.n_sample"),
        ("n_samples = 12", "standardize = 1", "data.standardize"),
        ('kind = "rbf"', 'kind = "laplacian"', "kernel.kind"),
        ('kind = "rbf"', "", "kernel.kind"),
        ('kind = "rbf"', 'kind = "rbf"\nwidth = 2.0', "kernel"),
        ('kind = "rbf"', 'kind = "rbf"\ndelta = -1.0', "kernel"),
        ("[kernel]", "[kernels]", "kernels"),  # a misspelt table is an unknown key
        ("[data]", "[dataset]", "dataset"),
        ('name = "tiny"', 'name = "tiny"\ncolour = "red"', "colour"),
    ],
)
def test_bad_file_names_the_key(tmp_path, old, new, key):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ValueError, match=rf"key '{key}'") as info:
        load_instance(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    "extra, key",
    [
        ('[validate]\nmethods = ["nope"]', "validate.methods"),
        ('[validate]\nmethods = "admm"', "validate.methods"),
        ('[validate]\nreference_solver = "MOSEK"', "validate.reference_solver"),
        ("[validate]\nobjective_tol = -1.0", "validate.objective_tol"),
        ("[validate]\nresidual_tol = true", "validate.residual_tol"),
        ("[validate]\ntol_objective = -1.0", "validate.tol_objective"),  # named as the file spells it
        ("[validate]\nresidual_tol = 1e-6\ntol_residual = 1e-6", "validate.tol_residual"),
        ("[validate]\ntolerance = 1e-6", "validate.tolerance"),
        ("[options.nope]\ntol = 1e-8", "options.nope"),
        ("[options]\nadmm = 3", "options.admm"),
        ("[parameters]\nunknown_argument = 1", "parameters"),
        ("[options.reference]\neps = -1", "options.reference.eps"),
        ("[options.reference]\neps = 0.0", "options.reference.eps"),
        ('[options.reference]\neps = "1e-8"', "options.reference.eps"),
        ('[options.reference]\nverbose = "yes"', "options.reference.verbose"),
        ('[options.reference]\nsolver = "SCS"', "options.reference.solver"),
        ("[options.admm]\ntol = -1", "options.admm.tol"),
        ("[options.admm]\nresidual_tol = nan", "options.admm.residual_tol"),
        ("[options.admm]\nmax_iter = 0", "options.admm.max_iter"),
        ("[options.admm]\nmax_iter = 2.5", "options.admm.max_iter"),
        ("[options.admm]\nmax_iter = true", "options.admm.max_iter"),
        ("[options.admm]\ntime_limit = -inf", "options.admm.time_limit"),
        ("[options.admm]\ncheck_every = -3", "options.admm.check_every"),
        ("[options.admm]\nverbose = 1", "options.admm.verbose"),
    ],
)
def test_bad_validation_settings_name_the_key(tmp_path, extra, key):
    with pytest.raises(ValueError, match=rf"key '{key}'"):
        load_instance(write(tmp_path, GOOD + "\n" + extra + "\n"))


def test_bad_option_message_names_the_file_and_the_value(tmp_path):
    path = write(tmp_path, GOOD + "\n[options.reference]\neps = -1\n")
    with pytest.raises(ValueError) as info:
        load_instance(path)
    message = str(info.value)
    assert str(path) in message and "options.reference.eps" in message and "-1" in message


def test_valid_options_pass_through(tmp_path):
    """Options beyond the shared vocabulary are the method's own: they reach it unchanged."""
    text = GOOD + "\n[options.admm]\ntol = 1e-9\nmax_iter = 50\ntime_limit = inf\nrho = 2.0\n"
    text += "\n[options.reference]\neps = 1e-8\nverbose = false\nmax_iter = 100\n"
    kw = load_instance(write(tmp_path, text)).validate_kwargs
    assert kw["method_options"] == {"admm": {"tol": 1e-9, "max_iter": 50, "time_limit": float("inf"), "rho": 2.0}}
    assert kw["reference_options"] == {"eps": 1e-8, "verbose": False, "max_iter": 100}


def test_self_building_relaxation_rejects_keys_it_does_not_read(tmp_path):
    """A class with ``from_catalogue`` may read top-level keys of its own; any other top-level
    key is a misspelling, rejected with the file and the key."""
    head = 'name = "b"\nrelaxation = "bregman.ConditionalJC"\nn_clusters = 3\ndivergence = "kl"\n'
    data = '[data]\ndataset = "iris"\nn_samples = 12\n'
    load_instance(write(tmp_path, head + data))
    path = write(tmp_path, head + "eps = -1\n" + data)
    with pytest.raises(ValueError, match="key 'eps': unknown key") as info:
        load_instance(path)
    assert str(path) in str(info.value)


def test_from_catalogue_that_walks_the_table_may_read_any_key(tmp_path, fake_family):
    text = 'extra_setting = "kept"\n' + GOOD.replace("ssc.FrobeniusDS", "fakefam.Walker")
    inst = load_instance(write(tmp_path, text))
    assert inst.relaxation.seen["extra_setting"] == "kept"


def test_missing_table(tmp_path):
    text = GOOD[: GOOD.index("[kernel]")]
    with pytest.raises(ValueError, match=r"key 'kernel': missing table \[kernel\]"):
        load_instance(write(tmp_path, text))


@pytest.mark.parametrize("text", [GOOD + "\nthis is not toml\n", "name = \"a\"\nname = \"b\"\n" + GOOD, "[data\n"])
def test_invalid_toml(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match="invalid TOML") as info:
        load_instance(path)
    assert str(path) in str(info.value)


def test_a_file_that_is_not_text(tmp_path):
    path = tmp_path / "binary.toml"
    path.write_bytes(b"name = \"\xff\xfe\"\n")
    with pytest.raises(ValueError, match="invalid TOML") as info:
        load_instance(path)
    assert str(path) in str(info.value)


def test_unknown_dataset_lists_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match=r"'mnist'.*iris"):
        load_instance(write(tmp_path, GOOD.replace('"iris"', '"mnist"')))


# -- extensibility: other families plug in without touching the loader --------------------------
class _Scaled(FrobeniusDS):
    """Takes a constructor keyword (set through [parameters])."""

    def __init__(self, K, scale=1.0):
        super().__init__(np.asarray(K) * scale)
        self.scale = scale


class _FromCatalogue(FrobeniusDS):
    """Builds itself from the whole file, with a table of its own."""

    @classmethod
    def from_catalogue(cls, K, X, y, table):
        inst = cls(K)
        inst.seen = (X.shape, y.shape, table["labels"]["n_clusters"])
        return inst


class _Walker(FrobeniusDS):
    """Builds itself from every top-level key of the file."""

    @classmethod
    def from_catalogue(cls, K, X, y, table):
        inst = cls(K)
        inst.seen = dict(table.items())
        return inst


@pytest.fixture
def fake_family(monkeypatch):
    module = types.ModuleType("cvxclust.fakefam")
    module.Scaled, module.FromCatalogue, module.Walker = _Scaled, _FromCatalogue, _Walker
    monkeypatch.setitem(sys.modules, "cvxclust.fakefam", module)
    return module


def test_parameters_reach_the_constructor(tmp_path, fake_family):
    text = GOOD.replace("ssc.FrobeniusDS", "fakefam.Scaled") + "\n[parameters]\nscale = 0.5\n"
    inst = load_instance(write(tmp_path, text))
    assert isinstance(inst.relaxation, _Scaled) and inst.relaxation.scale == 0.5


def test_from_catalogue_hook(tmp_path, fake_family):
    text = GOOD.replace("ssc.FrobeniusDS", "fakefam.FromCatalogue") + "\n[labels]\nn_clusters = 3\n"
    inst = load_instance(write(tmp_path, text))
    assert inst.relaxation.seen == ((12, 4), (12,), 3)


def test_a_self_building_relaxation_may_omit_the_kernel(tmp_path):
    """Only a class with ``from_catalogue`` may omit [kernel]; it then gets K = None
    (ConditionalJC works on the data and reads its own top-level keys)."""
    data = '[data]\ndataset = "iris"\nn_samples = 12\n'
    with pytest.raises(ValueError, match="kernel"):
        load_instance(write(tmp_path, 'name = "a"\nrelaxation = "ssc.FrobeniusDS"\n' + data))
    head = 'name = "b"\nrelaxation = "bregman.ConditionalJC"\nn_clusters = 3\n'
    inst = load_instance(write(tmp_path, head + 'divergence = "kl"\n' + data))
    assert inst.relaxation.divergence.name == "kl" and inst.relaxation.X.shape == (12, 4)
    with pytest.raises(ValueError, match="divergence"):
        load_instance(write(tmp_path, head + data))
    sdp = 'name = "c"\nrelaxation = "cluhsic.CLUHSICSDP"\nstructure = "chain"\nn_clusters = 3\n'
    with pytest.raises(ValueError, match=r"\[kernel\]"):
        load_instance(write(tmp_path, sdp + data))


def test_find_problem_files(tmp_path):
    a = write(tmp_path, GOOD, "b.toml")
    b = write(tmp_path, GOOD, "a.toml")
    write(tmp_path, "ignored", "notes.txt")
    assert find_problem_files([tmp_path]) == [b, a]
    assert find_problem_files([a, tmp_path]) == [a, b]  # no duplicates
    with pytest.raises(FileNotFoundError, match="missing"):
        find_problem_files([tmp_path / "missing"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no problem files"):
        find_problem_files([empty])
