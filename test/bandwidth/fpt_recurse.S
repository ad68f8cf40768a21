/* Deep recursion (test_fullpt.c "recurse"): rec(100) calls rec(n - 1) down to rec(0): 101
 * calls (1 from _start, 100 from rec itself), 101 returns, 101 conditional branches (the jz
 * is taken once, at n = 0). The call stack gets 101 deep: with return compression the 64
 * innermost returns are predicted by the 64-deep return stack (a TNT bit each), the other
 * 37 are not (a TIP each). */
	.text
	.globl _start
	.type _start, @function
_start:
	mov $100, %edi
	call rec
	mov $60, %eax
	xor %edi, %edi
	syscall
	.size _start, . - _start

	.type rec, @function
rec:
	test %edi, %edi
	jz .Ldone
	dec %edi
	call rec
.Ldone:
	ret
	.size rec, . - rec

	.data
	.quad 0
	.section .note.GNU-stack, "", @progbits
