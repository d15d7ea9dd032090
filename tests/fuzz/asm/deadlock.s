# A deadlock: the vector pipe waits for a flag from MTE2 that is never set (the set_flag is
# missing). Nothing is running and nothing queued can set it, so the run stops with exit 4 and
# a report of each pipe's state.
.kind vector
copy_gm_to_ub ub[0x0], gm[0x0], nburst=1, len=4096
wait_flag MTE2, V, 0
vadd.fp16 ub[0x2000], ub[0x0], ub[0x800], repeat=8, mask=128
