#!/usr/bin/env python3
"""Inputs and golden output of the .asc add: x, y ~ U(-10, 10) float32 [8, 2048], z = x + y."""
import os
import numpy as np


def main():
    os.makedirs("input", exist_ok=True)
    os.makedirs("output", exist_ok=True)
    rng = np.random.default_rng(13)
    x = rng.uniform(-10, 10, [8, 2048]).astype(np.float32)
    y = rng.uniform(-10, 10, [8, 2048]).astype(np.float32)
    (x + y).astype(np.float32).tofile("./output/golden.bin")
    x.tofile("./input/input_x.bin")
    y.tofile("./input/input_y.bin")


if __name__ == "__main__":
    main()
