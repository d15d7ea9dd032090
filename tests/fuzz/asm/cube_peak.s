# Cube peak: back-to-back 128x128x128 fp16 MADs (8 x 8 x 8 = 512 fractal steps each) from L0A
# and L0B into L0C. The operands are whatever L0A/L0B hold (zeros): this measures the Cube pipe
# alone. Expect pipe_util.cube close to 1: only dispatch, issue and the fill latency are not
# cube cycles.
.kind cube
.rep 40
mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=128, k=128, n=128, acc=1
.endr
