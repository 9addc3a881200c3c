package gputest

// testPTX is a hand-written module used by the API tests. Its kernels:
//
//	fill(out, n, k):  out[i] = 3*i + k for i < n (u32), one thread per i.
//	poke(p, off, v):  stores the u32 v at byte address p+off.
//	layout(out, a, s, h, d): writes its parameters' bytes to out, to check
//	   parameter sizes and alignments: a (f32) at 0, s (12 bytes, .align 8)
//	   at 4, h (u16, zero-extended) at 16, d (f64) at 24.
const testPTX = `.version 8.0
.target sm_90
.address_size 64

.visible .entry fill(
	.param .u64 fill_out,
	.param .u32 fill_n,
	.param .u32 fill_k
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<5>;

	ld.param.u64 %rd1, [fill_out];
	ld.param.u32 %r1, [fill_n];
	ld.param.u32 %r2, [fill_k];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r6, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r6, %r1;
	@%p1 bra $L_done;
	mad.lo.s32 %r7, %r6, 3, %r2;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r6, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r7;
$L_done:
	ret;
}

.visible .entry poke(
	.param .u64 poke_p,
	.param .u64 poke_off,
	.param .u32 poke_v
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<4>;

	ld.param.u64 %rd1, [poke_p];
	ld.param.u64 %rd2, [poke_off];
	ld.param.u32 %r1, [poke_v];
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r1;
	ret;
}

.visible .entry layout(
	.param .u64 layout_out,
	.param .f32 layout_a,
	.param .align 8 .b8 layout_s[12],
	.param .u16 layout_h,
	.param .f64 layout_d
)
{
	.reg .b16 %h<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<2>;
	.reg .f64 %fd<2>;
	.reg .b64 %rd<3>;

	ld.param.u64 %rd1, [layout_out];
	cvta.to.global.u64 %rd2, %rd1;
	ld.param.f32 %f1, [layout_a];
	st.global.f32 [%rd2], %f1;
	ld.param.u32 %r1, [layout_s];
	st.global.u32 [%rd2+4], %r1;
	ld.param.u32 %r2, [layout_s+4];
	st.global.u32 [%rd2+8], %r2;
	ld.param.u32 %r3, [layout_s+8];
	st.global.u32 [%rd2+12], %r3;
	ld.param.u16 %h1, [layout_h];
	cvt.u32.u16 %r4, %h1;
	st.global.u32 [%rd2+16], %r4;
	mov.u32 %r5, 0;
	st.global.u32 [%rd2+20], %r5;
	ld.param.f64 %fd1, [layout_d];
	st.global.f64 [%rd2+24], %fd1;
	ret;
}
`

// badPTX is testPTX's header and a kernel whose line 8 holds an instruction
// that does not exist.
const badPTX = `.version 8.0
.target sm_90
.address_size 64

.visible .entry broken(
)
{
	frobnicate.u32 %r1, 7;
	ret;
}
`

// badPTXLine is the line of badPTX that holds the error.
const badPTXLine = 8
