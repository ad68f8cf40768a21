/* A switch through a jump table (test_fullpt.c "switch"): 400 iterations of i = 0..399, each
 * an indirect jmp through table[i & 3]; cases 0..2 end with a direct jmp to the loop's end
 * (300 direct jumps), case 3 falls through. The loop's jne runs 400 times, taken 399. */
	.text
	.globl _start
	.type _start, @function
_start:
	xor %ebx, %ebx
	xor %r13d, %r13d
	lea table(%rip), %rdx
.Lloop:
	mov %ebx, %eax
	and $3, %eax
	jmp *(%rdx,%rax,8)
.Lcase0:
	add $1, %r13
	jmp .Lnext
.Lcase1:
	add $2, %r13
	jmp .Lnext
.Lcase2:
	add $3, %r13
	jmp .Lnext
.Lcase3:
	add $4, %r13
.Lnext:
	inc %ebx
	cmp $400, %ebx
	jne .Lloop
	mov $60, %eax
	xor %edi, %edi
	syscall
	.size _start, . - _start

	.section .rodata
	.p2align 3
table:
	.quad .Lcase0, .Lcase1, .Lcase2, .Lcase3

	.data
	.quad 0
	.section .note.GNU-stack, "", @progbits
