# Cube peak: back-to-back 128x128x128 fp16 MADs (8 x 8 x 8 = 512 fractal steps each) from L0A
# and L0B into L0C. The operands are whatever L0A/L0B hold (zeros): this measures the Cube pipe
# alone. Expect pipe_util.cube close to 1: only the kernel's start-up (code fetch, initialisation,
# arguments; a few us on 910B-like), the issue and the fill latency are not cube cycles; 2000 MADs
# make them small.
# Needs a 910-class preset (configs/ascend910b-like.ini or ascend910-like.ini): its 128x128 fp16
# operands take 32 KiB of L0A and L0B, more than tiny.ini has (on tiny it exits 2 naming the overrun).
.kind cube
.rep 2000
mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=128, k=128, n=128, acc=1
.endr
