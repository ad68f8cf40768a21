/* A chain of indirect calls (test_fullpt.c "icall"): 50 times, _start calls f1 through a
 * pointer, f1 calls f2, f2 calls f3, each through a pointer; f1, f2, f3 return. f1 is near
 * _start (same 64 KiB), f2 is linked at 0x20000000 (section .far2: a TIP from f1 needs 4 IP
 * bytes), f3 at 0x100000000 (section .far3: above 4 GiB, 6 IP bytes from f2). */
	.text
	.globl _start
	.type _start, @function
_start:
	mov $50, %r12d
.Lloop:
	call *fp1(%rip)
	dec %r12d
	jnz .Lloop
	mov $60, %eax
	xor %edi, %edi
	syscall
	.size _start, . - _start

	.type f1, @function
f1:
	call *fp2(%rip)
	ret
	.size f1, . - f1

	.section .far2, "ax", @progbits
	.type f2, @function
f2:
	call *fp3(%rip)
	ret
	.size f2, . - f2

	.section .far3, "ax", @progbits
	.type f3, @function
f3:
	ret
	.size f3, . - f3

	.data
	.p2align 3
fp1:	.quad f1
fp2:	.quad f2
fp3:	.quad f3
	.section .note.GNU-stack, "", @progbits
