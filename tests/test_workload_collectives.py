"""Synchronisation patterns (ring, parameter server) and worker placement."""

import numpy as np
import pytest

from ns3_hpsched.errors import ConfigError
from ns3_hpsched.workload import Cluster, parameter_server, ring_allreduce

M = 1_000_000  # divisible by every N and S used below, so the analytic byte counts are exact


@pytest.mark.parametrize("n", [2, 4, 5, 8])
def test_ring_worker_sends_2_n_minus_1_over_n_m(n):
    """In a one-phase ring every worker sends 2(N-1)/N * M bytes to its successor."""
    sync = ring_allreduce(list(range(n)), M)
    (phase,) = sync.phases
    assert [(f.src, f.dst) for f in phase] == [(i, (i + 1) % n) for i in range(n)]
    assert all(f.bytes == 2 * (n - 1) * M // n for f in phase)


def test_chained_ring_has_2_n_minus_1_steps_of_m_over_n():
    """The chained ring is 2(N-1) phases of M/N per worker: the same total as one phase."""
    n = 4
    chained, single = ring_allreduce(list(range(n)), M, chained=True), ring_allreduce(list(range(n)), M)
    assert len(chained.phases) == 2 * (n - 1)
    assert all(f.bytes == M // n for phase in chained.phases for f in phase)
    assert chained.bytes == single.bytes


def test_ring_bytes_round_up_when_not_divisible():
    """Non-divisible sizes round up: 3 workers, M=10 -> ceil(40/3) = 14 bytes each."""
    assert {f.bytes for f in ring_allreduce([0, 1, 2], 10).phases[0]} == {14}


def test_ring_drops_traffic_inside_a_host():
    """Workers sharing a host exchange nothing over the network."""
    sync = ring_allreduce([0, 0, 1, 1], M)
    assert sorted((f.src, f.dst) for f in sync.phases[0]) == [(0, 1), (1, 0)]
    assert ring_allreduce([3, 3], M).phases == ()


@pytest.mark.parametrize("shards", [1, 2, 4])
def test_separate_ps_moves_2_n_m(shards):
    """Separate PS: push + pull move 2*N*M bytes, N = number of workers, whatever the sharding."""
    workers = [0, 1, 2, 3, 4]
    sync = parameter_server(workers, M, ps_hosts=list(range(10, 10 + shards)))
    push, pull = sync.phases
    assert sum(f.bytes for f in push) == sum(f.bytes for f in pull) == len(workers) * M
    assert sync.bytes == 2 * len(workers) * M


@pytest.mark.parametrize("shards", [1, 3, 5])
def test_colocated_ps_moves_2_n_minus_1_m(shards):
    """Colocated PS: each worker's own shard stays local, so 2*(N-1)*M bytes cross the network."""
    workers = [0, 1, 2, 3, 4]
    sync = parameter_server(workers, M, shards=shards)
    assert sync.bytes == 2 * (len(workers) - 1) * M
    assert all(f.src != f.dst for phase in sync.phases for f in phase)


def test_ps_shards_split_bytes_exactly():
    """Shards of a non-divisible model differ by at most one byte and add up to M."""
    sync = parameter_server([0, 1], 10, ps_hosts=[5, 6, 7])
    assert sorted(f.bytes for f in sync.phases[0] if f.src == 0) == [3, 3, 4]


def test_packed_spread_and_random_placements():
    """Packed fills hosts in order, spread uses distinct hosts, random is seeded."""
    packed = Cluster(4, gpus_per_host=2, policy="packed")
    assert packed.allocate(3) == (0, 0, 1)
    assert packed.allocate(2) == (1, 2)
    spread = Cluster(4, gpus_per_host=2, policy="spread")
    assert spread.allocate(3) == (0, 1, 2)
    assert spread.allocate(2) == (0, 3)
    draw = lambda seed: Cluster(8, 2, "random", np.random.default_rng(seed)).allocate(4)
    assert draw(5) == draw(5)


def test_placement_too_small_cluster_fails_clearly():
    """Asking for more GPUs than are free names the field and the fix."""
    cluster = Cluster(2, gpus_per_host=2)
    cluster.allocate(3)
    with pytest.raises(ConfigError) as err:
        cluster.allocate(2)
    assert err.value.field == "workload.workers" and "gpus_per_host" in err.value.fix


def test_released_gpus_are_reused():
    """A stopped job's GPUs go back to the pool for the next job."""
    cluster = Cluster(2, gpus_per_host=1)
    hosts = cluster.allocate(2)
    cluster.release(hosts)
    assert cluster.allocate(2) == (0, 1)
