/* A tiny stack-machine interpreter running a bytecode program (sum of
 * squares and a Collatz walk), and a table-driven tokenizer state machine. */
#include <stdio.h>
#include <ctype.h>

enum { PUSH, LOAD, STORE, ADD, SUB, MUL, MOD, DIV, JZ, JMP, LT, PRINT, HALT };

static long run(const long *code) {
	long stack[64], vars[8] = {0};
	int sp = 0, pc = 0;
	long steps = 0;
	for (;;) {
		steps++;
		long op = code[pc++];
		switch (op) {
		case PUSH: stack[sp++] = code[pc++]; break;
		case LOAD: stack[sp++] = vars[code[pc++]]; break;
		case STORE: vars[code[pc++]] = stack[--sp]; break;
		case ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case SUB: sp--; stack[sp - 1] -= stack[sp]; break;
		case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
		case MOD: sp--; stack[sp - 1] %= stack[sp]; break;
		case DIV: sp--; stack[sp - 1] /= stack[sp]; break;
		case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
		case JZ: if (stack[--sp] == 0) pc = (int)code[pc]; else pc++; break;
		case JMP: pc = (int)code[pc]; break;
		case PRINT: printf("vm: %ld\n", stack[--sp]); break;
		case HALT: return steps;
		default: printf("bad op %ld\n", op); return -1;
		}
	}
}

static int tokenize(const char *s, int counts[4]) {
	/* states: 0 space, 1 ident, 2 number, 3 punct */
	int state = 0, tokens = 0;
	for (;; s++) {
		int c = (unsigned char)*s;
		int cls = c == 0 ? -1 : isalpha(c) || c == '_' ? 1 : isdigit(c) ? 2 : isspace(c) ? 0 : 3;
		if (state == 1 && cls == 2)
			cls = 1;
		if (cls != state || cls == 3) {
			if (state != 0) {
				counts[state]++;
				tokens++;
			}
			state = cls;
		}
		if (c == 0)
			break;
	}
	return tokens;
}

int main(void) {
	/* i = 0; s = 0; while (i < 100) { s = s + i*i; i = i + 1; } print s;
	 * n = 27; c = 0; while (1 < n) { n = n%2 ? 3n+1 : n/2; c = c + 1; } print c */
	long prog[] = {
		PUSH, 0, STORE, 0, PUSH, 0, STORE, 1,         /* 0..7 */
		LOAD, 0, PUSH, 100, LT, JZ, 34,               /* 8..14 */
		LOAD, 1, LOAD, 0, LOAD, 0, MUL, ADD, STORE, 1, /* 15..24 */
		LOAD, 0, PUSH, 1, ADD, STORE, 0, JMP, 8,      /* 25..33 */
		LOAD, 1, PRINT,                               /* 34..36 */
		PUSH, 27, STORE, 2, PUSH, 0, STORE, 3,        /* 37..44 */
		PUSH, 1, LOAD, 2, LT, JZ, 87,                 /* 45..51 */
		LOAD, 2, PUSH, 2, MOD, JZ, 71,                /* 52..58 */
		LOAD, 2, PUSH, 3, MUL, PUSH, 1, ADD, STORE, 2, JMP, 78, /* 59..70 */
		LOAD, 2, PUSH, 2, DIV, STORE, 2,              /* 71..77 */
		LOAD, 3, PUSH, 1, ADD, STORE, 3, JMP, 45,     /* 78..86 */
		LOAD, 3, PRINT, HALT};                       /* 87..90 */
	long steps = run(prog);
	printf("steps=%ld\n", steps);
	int counts[4] = {0};
	int t = tokenize("int x1 = foo(42, y_2) + 7;\n  while (a<=b) { c += 3; }", counts);
	printf("tokens=%d idents=%d numbers=%d punct=%d\n", t, counts[1], counts[2], counts[3]);
	return steps > 0 ? 0 : 1;
}
