#!/usr/bin/env python3
"""Inputs and golden output of the add example: x, y ~ U(-100, 100) as fp16, z = x + y."""
import os
import numpy as np


def main():
    os.makedirs("input", exist_ok=True)
    os.makedirs("output", exist_ok=True)
    rng = np.random.default_rng(2024)
    x = rng.uniform(-100, 100, [8, 2048]).astype(np.float16)
    y = rng.uniform(-100, 100, [8, 2048]).astype(np.float16)
    golden = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    x.tofile("./input/input_x.bin")
    y.tofile("./input/input_y.bin")
    golden.tofile("./output/golden.bin")


if __name__ == "__main__":
    main()
