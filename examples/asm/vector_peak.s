# Vector peak: fp16 adds of 64 repeats (64 x 128 lanes) each, operands placed in different UB
# banks (dst banks 0-7, src0 banks 8-15, src1 banks 16-23 with 64 banks of 32 B): one repeat per
# cycle, no bank conflicts. Compare with ub_bank_conflict.s. 4000 adds make the kernel's start-up
# (a few us on 910B-like) small beside the vector cycles.
# Needs a 910-class preset (configs/ascend910b-like.ini or ascend910-like.ini): its operands span
# 48 KiB of UB, more than tiny.ini has (on tiny it exits 2 naming the overrun).
.kind vector
.set DST 0x0
.set SRC0 0x4100
.set SRC1 0x8200
.rep 4000
vadd.fp16 ub[DST], ub[SRC0], ub[SRC1], repeat=64, mask=128
.endr
