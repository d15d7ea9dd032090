# Vector peak: fp16 adds of 64 repeats (64 x 128 lanes) each, operands placed so that no repeat
# has a UB bank conflict under the 220x rules (chip.aicore.ub.*: rows of 32 B interleave over 16
# bank groups, a group's next bank 64 KiB further): src0 and src1 read complementary halves of
# the groups (256 B apart), and dst writes the groups src1 reads in another bank (64 KiB
# further). One repeat per cycle. Compare with ub_bank_conflict.s. 4000 adds make the kernel's
# start-up (a few us on 910B-like) small beside the vector cycles.
# Needs a 910-class preset (configs/ascend910b-like.ini or ascend910-like.ini): its operands span
# 80 KiB of UB, more than tiny.ini has (on tiny it exits 2 naming the overrun).
.kind vector
.set DST 0x10000
.set SRC0 0x4100
.set SRC1 0x8000
.rep 4000
vadd.fp16 ub[DST], ub[SRC0], ub[SRC1], repeat=64, mask=128
.endr
