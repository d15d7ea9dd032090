#!/usr/bin/python3
"""Every distinct Conv layer of zoo models as a single-node model (Conv with bias, then Relu,
which the fuse_conv pass folds into the kernel), run with `sfumato run --reference` in
functional mode on each preset: a deadlock, a fault or a mismatch shows up per layer shape.

  bench/conv_sweep.py [--models resnet50,mobilenet_v2,squeezenet] [--configs tiny,...]
                      [--sfumato build/bin/sfumato] [--mode functional]

Prints one line per (preset, shape): status, wall seconds, the check line; exit 1 if any failed.
Needs Debian's python3 with the onnx module (/usr/bin/python3)."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference, TensorProto

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def conv_layers(path):
    """Distinct Conv shapes of a model: (key, node name, attrs)."""
    m = onnx.load(path)
    m = shape_inference.infer_shapes(m)
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
        dims = [d.dim_value or 1 for d in vi.type.tensor_type.shape.dim]  # symbolic batch: 1
        shapes[vi.name] = dims
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    seen = {}
    for n in m.graph.node:
        if n.op_type != "Conv":
            continue
        x = shapes[n.input[0]]
        w = inits[n.input[1]] if n.input[1] in inits else shapes[n.input[1]]
        a = {at.name: helper.get_attribute_value(at) for at in n.attribute}
        key = (tuple(x), tuple(w), tuple(a.get("strides", [1, 1])), tuple(a.get("pads", [0, 0, 0, 0])),
               tuple(a.get("dilations", [1, 1])), int(a.get("group", 1)))
        if key not in seen:
            seen[key] = n.name
    return [(k, v) for k, v in seen.items()]


def single_conv(key, path, seed):
    x, w, strides, pads, dil, group = key
    rng = np.random.default_rng(seed)
    k = w[0]
    fan_in = w[1] * w[2] * w[3]
    W = (rng.standard_normal(w) / np.sqrt(fan_in)).astype(np.float32)
    B = (0.1 * rng.standard_normal(k)).astype(np.float32)
    conv = helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", strides=list(strides), pads=list(pads),
                            dilations=list(dil), group=group, kernel_shape=[w[2], w[3]])
    relu = helper.make_node("Relu", ["c"], ["y"], name="relu")
    g = helper.make_graph([conv, relu], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,mobilenet_v2,squeezenet")
    ap.add_argument("--configs", default="tiny,ascend910-like,ascend910b-like")
    ap.add_argument("--sfumato", default=os.path.join(root, "build/bin/sfumato"))
    ap.add_argument("--mode", default="functional")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="conv_sweep")
    layers = []
    for m in args.models.split(","):
        p = os.path.join(tmp, m + ".onnx")
        subprocess.run([args.sfumato, "zoo", "export", m, "-o", p], check=True, capture_output=True)
        for key, name in conv_layers(p):
            if all(key != k for k, _, _ in layers):
                layers.append((key, m, name))
    print(f"{len(layers)} distinct Conv shapes from {args.models}", flush=True)
    failed = 0
    for cfg in args.configs.split(","):
        for i, (key, m, name) in enumerate(layers):
            p = os.path.join(tmp, f"conv{i}.onnx")
            if not os.path.exists(p):
                single_conv(key, p, i)
            out = os.path.join(tmp, "out")
            cmd = [args.sfumato, "run", p, "--config", os.path.join(root, "configs", cfg + ".ini"), "--mode",
                   args.mode, "--trace", "off", "--out", out]
            if args.mode == "functional":
                cmd.append("--reference")
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.time() - t0
            check = [l.strip() for l in r.stdout.splitlines() if l.strip().startswith("check")]
            ok = r.returncode == 0 and (args.mode != "functional" or (check and "passed" in check[0]))
            failed += not ok
            x, w, s, pd, d, g = key
            desc = f"x{list(x)} w{list(w)} s{s[0]} p{pd[0]} d{d[0]} g{g}"
            msg = check[0] if check else (r.stderr.strip().splitlines() or ["?"])[0][:160]
            print(f"{cfg:16} {m:13} {name:28} {desc:52} {'ok  ' if ok else 'FAIL'} rc={r.returncode} "
                  f"{wall:6.1f}s  {msg}", flush=True)
    print(f"{failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
