"""gnnc.Graph: COO graphs from arrays, checked."""

import numpy as np
import pytest

import gnnc


def test_counts_default_to_the_largest_id():
    g = gnnc.Graph.from_coo([0, 1, 2], [1, 2, 0])
    assert (g.num_src, g.num_dst, g.num_edges) == (3, 3, 3)
    assert g.src.dtype == np.int64 and g.dst.dtype == np.int64


def test_one_count_gives_the_other():
    g = gnnc.Graph.from_coo([0], [0], num_src=5)
    assert (g.num_src, g.num_dst) == (5, 5)
    g = gnnc.Graph.from_coo([0, 3], [1, 1], num_src=4, num_dst=2)
    assert (g.num_src, g.num_dst) == (4, 2)


def test_empty_graph():
    g = gnnc.Graph.from_coo(np.zeros(0, np.int64), np.zeros(0, np.int64),
                            num_src=2, num_dst=3)
    assert g.num_edges == 0 and (g.num_src, g.num_dst) == (2, 3)


def test_int32_ids_are_taken():
    g = gnnc.Graph.from_coo(np.array([1, 0], np.int32),
                            np.array([0, 1], np.int32))
    assert g.src.tolist() == [1, 0]


@pytest.mark.parametrize("src,dst,kwargs,message", [
    ([0, 1], [0], {}, "2 source ids but 1 destination ids"),
    ([[0, 1]], [[0, 1]], {}, "must be 1-D"),
    ([0, -1], [0, 0], {}, "out of range"),
    ([0, 3], [0, 0], {"num_src": 3}, "src id 3 is out of range"),
    ([0.5], [0.0], {}, "integer node ids"),
    ([0], [0], {"num_dst": -1}, "non-negative"),
    ("ab", [0], {}, "integer node ids|1-D"),
])
def test_bad_edges_are_errors(src, dst, kwargs, message):
    with pytest.raises(gnnc.Error, match=message):
        gnnc.Graph.from_coo(src, dst, **kwargs)


def test_from_dgl_reads_edges_and_counts():
    class FakeDGLGraph:  # the part of DGL's graph API from_dgl uses
        def edges(self, order):
            assert order == "eid"
            return np.array([0, 2]), np.array([1, 1])

        def num_src_nodes(self):
            return 3

        def num_dst_nodes(self):
            return 2

    g = gnnc.Graph.from_dgl(FakeDGLGraph())
    assert (g.num_src, g.num_dst, g.src.tolist()) == (3, 2, [0, 2])
