#!/usr/bin/python3
# Writes an unfused attention block as ONNX: softmax(Q K^T / sqrt(d) [causal]) V with Q, K, V
# inputs [batch, heads, seq, head_dim] (fp32; run it with --precision fp16), as
# MatMul(Q, Transpose(K)) -> Mul(scale) [-> Where(causal mask)] -> Softmax(-1) -> MatMul(., V).
# The graph's fuse_attention pass turns it into one FusedAttention node; `--passes
# all,-fuse_attention` keeps the three-kernel form. Usage: attention_model.py OUT.onnx B H S D [causal]
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out, b, h, s, d = sys.argv[1], *map(int, sys.argv[2:6])
causal = len(sys.argv) > 6 and sys.argv[6] == "1"
shape = [b, h, s, d]
inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in ("q", "k", "v")]
output = helper.make_tensor_value_info("o", TensorProto.FLOAT, shape)
inits = [numpy_helper.from_array(np.array(1.0 / np.sqrt(d), dtype=np.float32), "scale")]
nodes = [
    helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
    helper.make_node("MatMul", ["q", "kt"], ["qk"]),
    helper.make_node("Mul", ["qk", "scale"], ["s"]),
]
last = "s"
if causal:
    inits.append(numpy_helper.from_array(np.tril(np.ones((s, s), dtype=bool)), "mask"))
    inits.append(numpy_helper.from_array(np.array(-1e4, dtype=np.float32), "neg"))
    nodes.append(helper.make_node("Where", ["mask", "s", "neg"], ["sm"]))
    last = "sm"
nodes += [
    helper.make_node("Softmax", [last], ["p"], axis=-1),
    helper.make_node("MatMul", ["p", "v"], ["o"]),
]
graph = helper.make_graph(nodes, "attention", inputs, [output], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, out)
