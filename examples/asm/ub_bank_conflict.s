# UB bank conflicts: the same adds as vector_peak.s, but dst, src0 and src1 are 16 KiB apart, a
# multiple of bank_groups x bank_bytes (16 x 32 B = 512 B) inside one 64 KiB bank span, so the
# three operands' blocks of every repeat fall in the same 8 banks: two reads a group and three
# accesses a bank, 3 cycles a repeat, i.e. (3 - 1) x bank_conflict_cycles extra.
# Needs a 910-class preset (configs/ascend910b-like.ini or ascend910-like.ini): its operands span
# 48 KiB of UB, more than tiny.ini has (on tiny it exits 2 naming the overrun).
.kind vector
.set DST 0x0
.set SRC0 0x4000
.set SRC1 0x8000
.rep 4000
vadd.fp16 ub[DST], ub[SRC0], ub[SRC1], repeat=64, mask=128
.endr
