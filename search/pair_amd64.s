#include "textflag.h"

// func pairIndex(b []byte, c1, c2, or1, or2 byte, d, m int) int
//
// pairIndex returns the first i in [0, m) where b[i]|or1 == c1 and
// b[i+d]|or2 == c2, or -1. m is a multiple of 16 and m+d <= len(b). It
// tests 16 positions at a time with SSE2 (every amd64 has it).
TEXT ·pairIndex(SB), NOSPLIT, $0-56
	MOVQ b_base+0(FP), SI
	MOVQ d+32(FP), DX
	MOVQ m+40(FP), R8
	LEAQ (SI)(DX*1), R9

	// X0 = c1, X1 = c2, X4 = or1, X5 = or2, each byte 16 times.
	MOVBLZX c1+24(FP), AX
	MOVQ AX, X0
	PUNPCKLBW X0, X0
	PUNPCKLBW X0, X0
	PSHUFL $0, X0, X0
	MOVBLZX c2+25(FP), AX
	MOVQ AX, X1
	PUNPCKLBW X1, X1
	PUNPCKLBW X1, X1
	PSHUFL $0, X1, X1
	MOVBLZX or1+26(FP), AX
	MOVQ AX, X4
	PUNPCKLBW X4, X4
	PUNPCKLBW X4, X4
	PSHUFL $0, X4, X4
	MOVBLZX or2+27(FP), AX
	MOVQ AX, X5
	PUNPCKLBW X5, X5
	PUNPCKLBW X5, X5
	PSHUFL $0, X5, X5

	XORQ DI, DI
	TESTQ R8, R8
	JLE notfound

loop:
	MOVOU (SI)(DI*1), X2
	MOVOU (R9)(DI*1), X3
	POR X4, X2
	POR X5, X3
	PCMPEQB X0, X2
	PCMPEQB X1, X3
	PAND X3, X2
	PMOVMSKB X2, AX
	TESTL AX, AX
	JNZ found
	ADDQ $16, DI
	CMPQ DI, R8
	JLT loop

notfound:
	MOVQ $-1, ret+48(FP)
	RET

found:
	BSFL AX, AX
	ADDQ DI, AX
	MOVQ AX, ret+48(FP)
	RET
