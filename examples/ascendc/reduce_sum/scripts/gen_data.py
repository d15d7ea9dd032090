#!/usr/bin/env python3
"""Input and golden output of the row-sum example: x ~ U(-1, 1) float32 [128, 1000], golden =
row sums (computed in float64, rounded to float32)."""
import os
import numpy as np


def main():
    os.makedirs("input", exist_ok=True)
    os.makedirs("output", exist_ok=True)
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, [128, 1000]).astype(np.float32)
    golden = x.astype(np.float64).sum(axis=1).astype(np.float32)
    x.tofile("./input/input_x.bin")
    golden.tofile("./output/golden.bin")


if __name__ == "__main__":
    main()
