"""The mnn-bench command on a model converted by the real wheel."""
import argparse
import re

import pytest

from mnn.tools.bench import benchmark_model, main, parse_shape

pytest.importorskip("mnn.format.reader")


def test_bench_reports_latency_and_memory(wheel_models, capsys):
    _, path = wheel_models("elementwise")
    assert main([path, "--loops", "4", "--warmup", "1", "--threads", "1", "--quiet",
                 "--per-op"]) == 0
    out = capsys.readouterr().out
    m = re.search(r"max = +([\d.]+) ms +min = +([\d.]+) ms +avg = +([\d.]+) ms", out)
    assert m, out
    mx, mn, avg = (float(g) for g in m.groups())
    assert mn <= avg <= mx
    assert "peak memory" in out and "load" in out
    op_rows = set(re.findall(r"^  (\w+) +1 +[\d.]+ ", out, re.MULTILINE))  # type, count 1, ms
    assert op_rows == {"add", "tanh", "exp", "multiply"}


def test_bench_measures(wheel_models):
    _, path = wheel_models("elementwise")
    r = benchmark_model(path, loops=3, warmup=0, threads=2, shapes={"x": [4, 3],
                                                                    "x2": [4, 3]})
    assert r["ops"] == 4 and r["threads"] == 2
    assert r["min_ms"] <= r["avg_ms"] <= r["max_ms"]
    assert r["peak_run_mb"] > 0  # the run's arrays are seen by tracemalloc


def test_bench_errors(tmp_path, capsys):
    assert main([str(tmp_path / "none.mnn"), "--quiet"]) == 1
    assert "cannot read model file" in capsys.readouterr().out
    with pytest.raises(argparse.ArgumentTypeError, match="name:dims"):
        parse_shape("1,3,224,224")
    assert parse_shape("x:1x3x8x8") == ("x", [1, 3, 8, 8])
    with pytest.raises(ValueError, match="loops"):
        benchmark_model(str(tmp_path / "none.mnn"), loops=0)
