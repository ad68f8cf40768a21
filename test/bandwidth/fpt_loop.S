/* A loop of N = 1000 iterations (full-PT estimator test, test_fullpt.c "loop"): the jnz runs
 * 1000 times, taken 999 times, not taken once. One getpid syscall before it; the exit
 * syscall ends the run. No libc, no loader: everything user space runs is here. The .data
 * section is there because valgrind reads no symbols of an object without a writable
 * segment. */
	.text
	.globl _start
	.type _start, @function
_start:
	mov $39, %eax		/* getpid */
	syscall
	mov $1000, %ecx
.Lloop:
	dec %ecx
	jnz .Lloop
	mov $60, %eax		/* exit(0) */
	xor %edi, %edi
	syscall
	.size _start, . - _start

	.data
	.quad 0
	.section .note.GNU-stack, "", @progbits
