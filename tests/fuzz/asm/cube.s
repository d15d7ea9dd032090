.kind cube
copy_gm_to_l1_nd2nz.fp16 l1[0x0], gm[0x0], ndnum=1, n=32, d=64, srcd=64, dstc0=32
load2d.fp16 l0a[0x0], l1[0x0], repeat=4, transpose=1
load3d.fp16 l0b[0x0], l1[0x0], h=4, w=4, c1=1, kh=3, kw=3, sh=1, sw=1, dh=1, dw=1, pt=1, pb=1, pl=1, pr=1, mext=16, kext=144
fill.fp16 l0a[0x1000], repeat=2, blknum=1, scalar=0
mad.fp16 l0c[0x0], l0a[0x0], l0b[0x0], m=16, k=16, n=16, acc=0
fixpipe.fp32 gm[0x0], l0c[0x0], m=16, n=16, out=fp16, relu=1, nz2nd=1
set_cross_flag FIX, 2, 3
wait_cross_flag FIX, 2, 3
