"""gnn.dropout's mask, computed independently of gnnc in Python integers:
element e is kept iff the top 24 bits of word e % 4 of Philox-4x32-10 with
key `seed` and counter `offset + e // 4` reach ceil(rate * 2^24)."""

import math

MASK = 0xFFFFFFFF


def philox(counter, key):
    """The four 32-bit words of Philox-4x32-10 for a 64-bit counter and key
    (the counter's upper two words 0)."""
    c = [counter & MASK, counter >> 32, 0, 0]
    k = [key & MASK, key >> 32]
    for _ in range(10):
        p0 = 0xD2511F53 * c[0]
        p1 = 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & MASK, p1 & MASK,
             ((p0 >> 32) ^ c[3] ^ k[1]) & MASK, p0 & MASK]
        k = [(k[0] + 0x9E3779B9) & MASK, (k[1] + 0xBB67AE85) & MASK]
    return c


def kept(e, rate, seed, offset):
    """Whether element e (its row-major index) survives dropout."""
    word = philox((offset + e // 4) % (1 << 64), seed)[e % 4]
    return (word >> 8) >= math.ceil(rate * (1 << 24))
