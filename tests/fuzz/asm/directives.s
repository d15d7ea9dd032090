.set BASE 0x100
.set N (4 * 2) % 5 - -1
set_mask mask=64
.rep N, i
  .rep 2, j
  vadd.fp16 ub[BASE + i*0x200 + j*32], ub[0x0], ub[0x4000], repeat=2, dstrep=8, src0rep=8
  .endr
.endr
vmuls.fp32 ub[0x0], ub[0x100], scalar=-1.5e-3, mask=0xff00ff00ff00ff00:0x1
vcmp.fp16 ub[0x0], ub[0x100], ub[0x200], cmp=le
vconv.fp16 ub[0x0], ub[0x1000], src=fp32, round=rint
set_flag V, MTE3, 0
wait_flag V, MTE3, 0
copy_ub_to_gm.fp16 gm[0x10000], ub[0x100], nburst=4, len=512, srcgap=1
pipe_barrier ALL
scalar cycles=10
get_sysreg reg=block_idx, xd=3
