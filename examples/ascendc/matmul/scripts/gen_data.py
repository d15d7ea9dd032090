#!/usr/bin/env python3
"""Inputs and golden output of the matmul example: A [256, 128] and B [128, 128] ~ U(-1, 1) fp16,
golden C = A x B in float32."""
import os
import numpy as np


def main():
    os.makedirs("input", exist_ok=True)
    os.makedirs("output", exist_ok=True)
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, [256, 128]).astype(np.float16)
    b = rng.uniform(-1, 1, [128, 128]).astype(np.float16)
    golden = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float32)
    a.tofile("./input/x1_gm.bin")
    b.tofile("./input/x2_gm.bin")
    golden.tofile("./output/golden.bin")


if __name__ == "__main__":
    main()
