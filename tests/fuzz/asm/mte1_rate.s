# MTE1 rate: load2d of 64 fractals (32 KiB) from L1 into L0A (512 B/cycle on 910B-class) and
# into L0B (256 B/cycle), back to back on the MTE1 pipe. pipe_util.mte1 is close to 1; the
# cycles per load are in instr.csv (LOAD2D avg_cycles = bytes / rate + startup).
.kind cube
.rep 32
load2d.fp16 l0a[0x0], l1[0x0], repeat=64
load2d.fp16 l0b[0x0], l1[0x8000], repeat=64
.endr
