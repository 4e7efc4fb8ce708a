"""The Python benchmarks run and print their tables (tiny sizes), and
refuse bad arguments with a message (they are measurements, not tests:
nothing here is timed)."""

import os
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

BENCH = ROOT / "bench" / "python"


def run(script, *args):
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"))
    return subprocess.run([sys.executable, str(BENCH / script), *args],
                          capture_output=True, text=True, env=env,
                          timeout=600)


def test_call_overhead_prints_its_table():
    result = run("call_overhead_bench.py", "--repeats", "1", "--gnn-run",
                 str(BUILD / "bin" / "gnn-run"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split("|")[0].strip() == "rows"
    assert [line.split()[0] for line in lines[1:]] == ["1", "1000", "100000"]


def test_call_overhead_refuses_bad_arguments():
    result = run("call_overhead_bench.py", "--repeats", "0")
    assert result.returncode != 0
    assert "--repeats must be at least 1" in result.stderr
    result = run("call_overhead_bench.py", "--gnn-run", "/nonexistent/gnn-run")
    assert result.returncode != 0
    assert "no gnn-run at /nonexistent/gnn-run" in result.stderr


def test_torch_op_prints_its_table():
    pytest.importorskip("torch")
    result = run("torch_op_bench.py", "--quick", "--repeats", "1",
                 "--workloads", "ac")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines()
            if line.startswith("(")]
    assert [row[:3] for row in rows] == ["(a)", "(c)"]
    for row in rows:
        # The outputs agree with PyTorch's.
        assert float(row.split("|")[3].split()[0]) < 1e-4, row


def test_torch_op_refuses_bad_arguments():
    pytest.importorskip("torch")
    result = run("torch_op_bench.py", "--workloads", "xz")
    assert result.returncode != 0
    assert "--workloads takes letters among a, b, c, d" in result.stderr


def test_guard_cost_prints_its_tables():
    result = run("guard_cost_bench.py", "--n", "1000", "--repeats", "1",
                 "--build", str(BUILD))
    assert result.returncode == 0, result.stderr
    rows = {line.split("|")[0].strip(): line.split("|")[1].split()
            for line in result.stdout.splitlines() if "|" in line}
    # The Transformers' programs are gnn ops alone: nothing to guard.
    assert rows["copy: inference"] == ["0", "0"]
    assert rows["tutorial: training"] == ["0", "0"]
    assert "index reads" in rows and "integer divisions" in rows


def test_guard_cost_refuses_bad_arguments():
    result = run("guard_cost_bench.py", "--n", "0")
    assert result.returncode != 0
    assert "--n and --repeats must be at least 1" in result.stderr
    result = run("guard_cost_bench.py", "--build", "/nonexistent")
    assert result.returncode != 0
    assert "no gnn-opt at /nonexistent/bin/gnn-opt" in result.stderr
