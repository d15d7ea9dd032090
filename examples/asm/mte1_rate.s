# MTE1 rate: load2d of 64 fractals (32 KiB) from L1 into L0A (512 B/cycle on 910B-class) and
# into L0B (256 B/cycle), back to back on the MTE1 pipe. pipe_util.mte1 is close to 1; the
# cycles per load are in instr.csv (LOAD2D avg_cycles = bytes / rate + startup). 1200 pairs make
# the kernel's start-up (a few us on 910B-like) small beside them.
# Needs a 910-class preset (configs/ascend910b-like.ini or ascend910-like.ini): each load fills
# 32 KiB of L0A/L0B, more than tiny.ini has (on tiny it exits 2 naming the overrun).
.kind cube
.rep 1200
load2d.fp16 l0a[0x0], l1[0x0], repeat=64
load2d.fp16 l0b[0x0], l1[0x8000], repeat=64
.endr
