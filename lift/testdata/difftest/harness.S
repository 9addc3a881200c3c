# The native half of decode's differential single-instruction test
# (difftest_test.go): ds_run loads a whole register state, jumps to one
# case's instruction and, through ds_save, stores the state it leaves.
#
# State layout (400 bytes, shared with harness.c and the Go test):
#   0    16 general registers in encoding order (rax rcx rdx rbx rsp rbp rsi
#        rdi r8 ... r15)
#   128  RFLAGS
#   136  MXCSR (low 32 bits)
#   144  xmm0 ... xmm15, 16 bytes each
#
# Every case the test generates is "ds_case_N: <instruction>; jmp ds_save".

	.intel_syntax noprefix
	.text

# void ds_run(const struct state *in, void *code, struct state *out)
	.globl	ds_run
	.type	ds_run, @function
ds_run:
	push	rbx
	push	rbp
	push	r12
	push	r13
	push	r14
	push	r15
	mov	[rip+ds_host_rsp], rsp
	mov	[rip+ds_target], rsi
	mov	[rip+ds_outp], rdx
	ldmxcsr	[rdi+136]
	movdqu	xmm0, [rdi+144]
	movdqu	xmm1, [rdi+160]
	movdqu	xmm2, [rdi+176]
	movdqu	xmm3, [rdi+192]
	movdqu	xmm4, [rdi+208]
	movdqu	xmm5, [rdi+224]
	movdqu	xmm6, [rdi+240]
	movdqu	xmm7, [rdi+256]
	movdqu	xmm8, [rdi+272]
	movdqu	xmm9, [rdi+288]
	movdqu	xmm10, [rdi+304]
	movdqu	xmm11, [rdi+320]
	movdqu	xmm12, [rdi+336]
	movdqu	xmm13, [rdi+352]
	movdqu	xmm14, [rdi+368]
	movdqu	xmm15, [rdi+384]
	push	qword ptr [rdi+128]
	popfq
	mov	rax, [rdi+0]
	mov	rcx, [rdi+8]
	mov	rdx, [rdi+16]
	mov	rbx, [rdi+24]
	mov	rsp, [rdi+32]
	mov	rbp, [rdi+40]
	mov	rsi, [rdi+48]
	mov	r8, [rdi+64]
	mov	r9, [rdi+72]
	mov	r10, [rdi+80]
	mov	r11, [rdi+88]
	mov	r12, [rdi+96]
	mov	r13, [rdi+104]
	mov	r14, [rdi+112]
	mov	r15, [rdi+120]
	mov	rdi, [rdi+56]
	jmp	qword ptr [rip+ds_target]

	.globl	ds_save
ds_save:
	mov	[rip+ds_out+0], rax
	mov	[rip+ds_out+8], rcx
	mov	[rip+ds_out+16], rdx
	mov	[rip+ds_out+24], rbx
	mov	[rip+ds_out+32], rsp
	mov	[rip+ds_out+40], rbp
	mov	[rip+ds_out+48], rsi
	mov	[rip+ds_out+56], rdi
	mov	[rip+ds_out+64], r8
	mov	[rip+ds_out+72], r9
	mov	[rip+ds_out+80], r10
	mov	[rip+ds_out+88], r11
	mov	[rip+ds_out+96], r12
	mov	[rip+ds_out+104], r13
	mov	[rip+ds_out+112], r14
	mov	[rip+ds_out+120], r15
	movdqu	[rip+ds_out+144], xmm0
	movdqu	[rip+ds_out+160], xmm1
	movdqu	[rip+ds_out+176], xmm2
	movdqu	[rip+ds_out+192], xmm3
	movdqu	[rip+ds_out+208], xmm4
	movdqu	[rip+ds_out+224], xmm5
	movdqu	[rip+ds_out+240], xmm6
	movdqu	[rip+ds_out+256], xmm7
	movdqu	[rip+ds_out+272], xmm8
	movdqu	[rip+ds_out+288], xmm9
	movdqu	[rip+ds_out+304], xmm10
	movdqu	[rip+ds_out+320], xmm11
	movdqu	[rip+ds_out+336], xmm12
	movdqu	[rip+ds_out+352], xmm13
	movdqu	[rip+ds_out+368], xmm14
	movdqu	[rip+ds_out+384], xmm15
	stmxcsr	[rip+ds_out+136]
	mov	rsp, [rip+ds_host_rsp]
	pushfq
	pop	rax
	mov	[rip+ds_out+128], rax
	cld
	ldmxcsr	[rip+ds_mxcsr_default]
	mov	rdi, [rip+ds_outp]
	lea	rsi, [rip+ds_out]
	mov	ecx, 50
	rep movsq
	pop	r15
	pop	r14
	pop	r13
	pop	r12
	pop	rbp
	pop	rbx
	ret

	.data
	.p2align 3
ds_mxcsr_default:
	.long	0x1f80, 0
	.bss
	.p2align 4
ds_host_rsp:
	.zero	8
ds_target:
	.zero	8
ds_outp:
	.zero	8
	.p2align 4
ds_out:
	.zero	400

	.section .note.GNU-stack,"",@progbits
