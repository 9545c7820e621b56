"""Flow-level cross-check: per-flow FCT error and HPCC-style slowdown per size bucket."""

import numpy as np
import pandas as pd
import pytest

from ns3_hpsched.crosscheck import compare_flows, slowdown_by_size, slowdown_figure, summarize_flows


def _flows(fct, sizes, ideal, order=None):
    n = len(fct)
    frame = pd.DataFrame({"flow_id": np.arange(n), "cojob": np.arange(n), "bytes": sizes,
                          "standalone_fct_s": ideal, "fct_s": fct})
    return frame.iloc[order] if order is not None else frame


def test_flows_match_on_cojob_not_flow_id_and_errors_are_relative():
    """Two runs that released flows in other orders still pair flow i with flow i."""
    sizes, ideal = [100, 200, 300], [1.0, 2.0, 3.0]
    packet = _flows([2.0, 4.0, 3.0], sizes, ideal)
    fluid = _flows([2.2, 3.0, 3.3], sizes, ideal, order=[2, 0, 1]).assign(flow_id=[0, 1, 2])
    pairs = compare_flows(packet, fluid)
    assert pairs["rel_error"].tolist() == pytest.approx([0.1, -0.25, 0.1])
    summary = summarize_flows(pairs)
    assert summary["median_abs_error"].item() == pytest.approx(0.1)
    assert summary["error_of_mean_fct"].item() == pytest.approx((8.5 - 9.0) / 9.0)


def test_runs_of_different_workloads_are_refused():
    packet = _flows([1.0, 1.0], [100, 200], [1.0, 1.0])
    with pytest.raises(ValueError, match="same workload"):
        compare_flows(packet, _flows([1.0, 1.0], [100, 999], [1.0, 1.0]))


def test_slowdown_buckets_are_equal_count_size_percentiles_clamped_at_one():
    """40 flows of 1..40 bytes in 20 buckets of 2, by size: bucket b holds sizes 2b+1 and
    2b+2; a flow's packet slowdown equals its size (so p50 of bucket b = 2b + 1.5), and
    fluid FCTs below the standalone FCT count as slowdown 1."""
    rng = np.random.default_rng(0)
    sizes = rng.permutation(40)
    ideal = np.full(40, 2.0)
    pairs = compare_flows(_flows(ideal * (sizes + 1), sizes + 1, ideal), _flows(ideal / 2, sizes + 1, ideal))
    table = slowdown_by_size(pairs)
    packet, fluid = table[table["backend"] == "packet"], table[table["backend"] == "fluid"]
    assert packet["n"].tolist() == [2] * 20 and packet["size_pct"].tolist() == [5.0 * (b + 1) for b in range(20)]
    assert packet["max_bytes"].tolist() == [2 * b + 2 for b in range(20)]
    assert packet["p50"].tolist() == pytest.approx([2 * b + 1.5 for b in range(20)])
    assert packet["p99"].tolist() == pytest.approx([2 * b + 1.99 for b in range(20)])
    assert (fluid[["p50", "p95", "p99"]].to_numpy() == 1.0).all()


def test_slowdown_figure_is_written(tmp_path):
    pairs = compare_flows(_flows([2.0] * 40, np.arange(1, 41), [1.0] * 40), _flows([1.5] * 40, np.arange(1, 41), [1.0] * 40))
    path = slowdown_figure(slowdown_by_size(pairs), tmp_path / "s.png")
    assert path.stat().st_size > 1000


@pytest.mark.packet
def test_crosscheck_of_a_flow_workload_on_both_backends(tmp_path):
    """`invoke crosscheck` on a size_cdf scenario: every flow paired, slowdowns >= 1 on both
    backends, and a lone-ish small-load RDMA run agrees with fluid flow by flow."""
    from ns3_hpsched.cli import crosscheck

    scenario = tmp_path / "tiny.toml"
    scenario.write_text('name = "tiny"\nbackend = "packet"\n[topology]\nkind = "fat_tree"\nk = 4\n'
                        'rate_bps = 10e9\n[transport]\nkind = "rdma"\n[scheduler]\nname = "pinned"\n'
                        '[workload]\nkind = "size_cdf"\ncdf = "fb_hadoop"\nload = 0.05\nn_flows = 40\n')
    out = crosscheck(str(scenario), ["pinned"], {}, store=str(tmp_path / "store"))
    pairs = pd.read_parquet(out / "crosscheck_flows.parquet")
    slowdown = pd.read_csv(out / "crosscheck_slowdown.csv")
    assert len(pairs) == 40 and set(slowdown["backend"]) == {"packet", "fluid"}
    assert (slowdown[["p50", "p95", "p99"]] >= 1.0).all().all()
    assert pd.read_csv(out / "crosscheck_summary.csv")["median_abs_error"].item() < 0.10
    assert (out / "crosscheck_slowdown.png").stat().st_size > 1000
