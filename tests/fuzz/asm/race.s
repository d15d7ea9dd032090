# A race: MTE2 loads 4 KiB into UB and the vector pipe reads it without waiting for the load.
# The fix is the commented set_flag/wait_flag pair. `--check-races` reports the two
# instructions (exit 3); without it the add silently reads stale data.
.kind vector
copy_gm_to_ub ub[0x0], gm[0x0], nburst=1, len=4096
# set_flag MTE2, V, 0
# wait_flag MTE2, V, 0
vadd.fp16 ub[0x2000], ub[0x0], ub[0x800], repeat=8, mask=128
set_flag V, MTE3, 0
wait_flag V, MTE3, 0
copy_ub_to_gm gm[0x10000], ub[0x2000], nburst=1, len=2048
