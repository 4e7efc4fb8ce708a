"""A small graph Transformer in plain PyTorch with gnnc's fused attention in
place of its attention: every node attends to its in-neighbours. Trains it
to predict a smoothed node signal on random graphs.

    PYTHONPATH=build/python python3 examples/python/torch_graph_transformer.py
"""

# gnnc first: it loads OpenBLAS with its kernels for this CPU, which numpy
# would otherwise load with OpenBLAS's own choice (docs/python.md).
import gnnc  # isort: skip
import torch

import gnnc.torch


class GraphAttentionLayer(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads, self.d = heads, width // heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)
        self.ff = torch.nn.Sequential(torch.nn.Linear(width, 2 * width),
                                      torch.nn.ReLU(),
                                      torch.nn.Linear(2 * width, width))

    def forward(self, graph, x):
        n = x.shape[0]
        q, k, v = (t.contiguous() for t in
                   self.qkv(self.norm(x)).view(n, 3, self.heads, self.d).unbind(1))
        h = gnnc.torch.fused_attention(graph, q, k, v)
        x = x + self.out(h.reshape(n, -1))
        return x + self.ff(x)


def random_graph(n, degree, gen):
    dst = torch.arange(n).repeat_interleave(degree)
    src = torch.randint(0, n, dst.shape, generator=gen)
    return src, dst


def main():
    gen = torch.Generator().manual_seed(0)
    width, heads = 32, 4
    layers = torch.nn.ModuleList(GraphAttentionLayer(width, heads) for _ in range(2))
    embed, head = torch.nn.Linear(1, width), torch.nn.Linear(width, 1)
    params = [*layers.parameters(), *embed.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=3e-3)
    for step in range(200):
        n = 64
        src, dst = random_graph(n, 4, gen)
        graph = gnnc.Graph.from_coo(src, dst, num_src=n, num_dst=n)
        signal = torch.randn(n, 1, generator=gen)
        # Target: the mean of each node's in-neighbours' signal.
        target = torch.zeros(n, 1).index_add(0, dst, signal[src]) / 4
        x = embed(signal)
        for layer in layers:
            x = layer(graph, x)
        loss = torch.nn.functional.mse_loss(head(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 0 or step == 199:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
