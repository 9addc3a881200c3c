/* String functions: strlen, strcmp, strncmp, strchr, strrchr, strstr,
 * memcpy, memmove, memset, memcmp, strtok, sprintf, snprintf, strcpy, strcat. */
#include <stdio.h>
#include <string.h>

static unsigned sum(const unsigned char *p, size_t n) {
	unsigned h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

int main(void) {
	char buf[512];
	static char big[70000];
	const char *text = "the quick brown fox jumps over the lazy dog";
	printf("len=%zu\n", strlen(text));
	printf("cmp=%d %d %d\n", strcmp("abc", "abd") < 0, strcmp("b", "a") > 0, strcmp("x", "x"));
	printf("ncmp=%d\n", strncmp("hello world", "hello there", 5));
	printf("chr=%s rchr=%s\n", strchr(text, 'q'), strrchr(text, 'o'));
	printf("str=%s none=%d\n", strstr(text, "fox"), strstr(text, "cat") == NULL);
	for (int i = 0; i < (int)sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	memmove(big + 3, big, 60000); /* overlapping forward */
	memmove(big, big + 7, 50000); /* overlapping backward */
	memset(big + 100, 'Z', 1000);
	printf("big=%08x\n", sum((unsigned char *)big, sizeof big));
	memcpy(buf, text, strlen(text) + 1);
	printf("memcmp=%d\n", memcmp(buf, text, 44) == 0);
	char *tok, *save = buf;
	int ntok = 0;
	for (tok = strtok(save, " "); tok; tok = strtok(NULL, " "))
		printf("tok%d=%s\n", ntok++, tok);
	int n = sprintf(buf, "%d|%5d|%-5d|%05d|%x|%X|%o|%c|%s|%10.3s|%%|%ld|%lu", 42, -42, 7, 99, 255,
			255, 8, 'k', "str", "truncate", -1L, 123456789012UL);
	printf("sprintf(%d)=%s\n", n, buf);
	char small[8];
	n = snprintf(small, sizeof small, "%s-%d", "overflowing", 12345);
	printf("snprintf=%d '%s'\n", n, small);
	strcpy(buf, "con");
	strcat(buf, "cat");
	strncat(buf, "enated!!!", 6);
	printf("cat=%s %zu\n", buf, strspn("aaabbbccc", "ab"));
	return (int)(strlen(buf) & 0x7f);
}
