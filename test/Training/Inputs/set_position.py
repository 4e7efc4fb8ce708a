"""set_position.py STATE DIR STEP EPOCH BATCH SEEN PENDING: copies a
gnn-train state into DIR/train-state.safetensors with its position set
(the fingerprint kept)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "scripts", "py"))
import safetensors_util  # noqa: E402

src, out = sys.argv[1:3]
position = [int(v) for v in sys.argv[3:8]]
state = safetensors_util.read(src)
names = [n for n in state if state[n][0] == "I64" and len(state[n][2]) == 5]
assert len(names) == 1, names
dtype, shape, _ = state[names[0]]
state[names[0]] = (dtype, shape, position)
os.makedirs(out, exist_ok=True)
safetensors_util.write(os.path.join(out, "train-state.safetensors"), state)
