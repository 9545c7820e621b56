"""Successive halving, Hyperband brackets, seeded survivors and arrivals."""

import numpy as np
import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.workload import (MODELS, arrival_times, generate_search, hyperband_brackets,
                                  stage_iterations, successive_halving)

# Li et al., "Hyperband", JMLR 18 (2018), Table 1: R = 81, eta = 3; (n_i, r_i) per round of each bracket s.
PAPER_TABLE_R81_ETA3 = {
    4: [(81, 1), (27, 3), (9, 9), (3, 27), (1, 81)],
    3: [(34, 3), (11, 9), (3, 27), (1, 81)],
    2: [(15, 9), (5, 27), (1, 81)],
    1: [(8, 27), (2, 81)],
    0: [(5, 81)],
}


def test_halving_16_by_2_leaves_8_4_2_1():
    """Halving 16 configurations with eta=2 runs 16, then 8, 4, 2, 1 jobs."""
    stages = successive_halving(16, [1, 2, 4, 8, 16], 2, np.random.default_rng(0))
    assert [len(s.jobs) for s in stages] == [16, 8, 4, 2, 1]
    assert all(set(b.jobs) <= set(a.jobs) for a, b in zip(stages, stages[1:]))


def test_hyperband_brackets_match_paper_table():
    """Hyperband's brackets for R=81, eta=3 are the paper's Table 1."""
    brackets = hyperband_brackets(81, 3)
    assert {b.s: list(zip(b.configs, b.resources)) for b in brackets} == PAPER_TABLE_R81_ETA3


def test_hyperband_search_runs_each_bracket_as_a_cojob():
    """search = hyperband makes one cojob per bracket whose stage sizes follow the bracket."""
    w = generate_search(n_hosts=16, seed=0, search="hyperband", max_resource=9, workers=1, gpus_per_host=8)
    assert [[len(s.jobs) for s in c.stages] for c in w.cojobs] == [[9, 3, 1], [5, 1], [3]]
    assert [[s.iterations for s in c.stages] for c in w.cojobs] == [[1, 3, 9], [3, 9], [9]]


def test_iterations_grow_by_eta_or_are_explicit():
    """A first-stage count grows by eta per stage; an explicit list is taken as is."""
    assert stage_iterations(2, 3, 3) == (2, 6, 18)
    assert stage_iterations([5, 1, 7], 2, 3) == (5, 1, 7)
    with pytest.raises(ConfigError) as err:
        stage_iterations([5, 1], 2, 3)
    assert err.value.field == "workload.iterations"


def test_joiners_enter_at_stage_boundaries():
    """With join=2 every later stage has the survivors of the previous one plus two new jobs."""
    stages = successive_halving(4, [1, 1, 1], 2, np.random.default_rng(1), join=2)
    assert [len(s.jobs) for s in stages] == [4, 4, 4]
    assert [s.joined for s in stages] == [(), (4, 5), (6, 7)]
    for a, b in zip(stages, stages[1:]):
        assert set(b.jobs) - set(b.joined) <= set(a.jobs)


def test_same_seed_same_workload_other_seed_other_survivors():
    """The seed fixes the whole search; another seed changes who survives."""
    kwargs = dict(n_hosts=16, configurations=8, stages=3, workers=2, placement="random")
    a, b = generate_search(seed=7, **kwargs), generate_search(seed=7, **kwargs)
    assert a == b
    survivors = lambda w: [s.jobs for c in w.cojobs for s in c.stages[1:]]
    assert any(survivors(generate_search(seed=s, **kwargs)) != survivors(a) for s in (8, 9))


def test_poisson_arrivals_have_the_requested_rate():
    """Poisson arrivals start at 0 and their mean gap is 1/rate (within sampling error)."""
    times = np.array(arrival_times(4001, np.random.default_rng(3), rate=4.0))
    assert times[0] == 0.0 and np.all(np.diff(times) >= 0)
    assert np.diff(times).mean() == pytest.approx(0.25, rel=0.05)


def test_model_gradient_bytes_are_four_per_parameter():
    """Gradients are fp32: ResNet-50 moves 102,228,128 bytes, VGG-16 553,430,176."""
    assert MODELS["resnet50"].gradient_bytes == 4 * 25_557_032
    assert MODELS["vgg16"].gradient_bytes == 4 * 138_357_544
    assert MODELS["resnet50"].compute_s == pytest.approx(0.305, abs=0.005)
