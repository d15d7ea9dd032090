#!/usr/bin/env python3
"""Inputs and golden output of the matmul + leaky relu example: A [256, 128], B [128, 128] ~ U(-1, 1)
fp16; golden C = LeakyRelu(A x B, 0.001): the product in float32 rounded to fp16 (the FixPipe),
then the slope applied in fp16 (the vector unit)."""
import os
import numpy as np


def main():
    os.makedirs("input", exist_ok=True)
    os.makedirs("output", exist_ok=True)
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, [256, 128]).astype(np.float16)
    b = rng.uniform(-1, 1, [128, 128]).astype(np.float16)
    c = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16).astype(np.float32)
    alpha = np.float32(np.float16(0.001))
    golden = np.where(c >= 0, c, c * alpha).astype(np.float16)
    a.tofile("./input/x1_gm.bin")
    b.tofile("./input/x2_gm.bin")
    golden.tofile("./output/golden.bin")


if __name__ == "__main__":
    main()
