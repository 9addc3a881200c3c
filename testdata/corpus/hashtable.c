/* A small open-addressing hash table with string keys: insert, update,
 * lookup, delete (tombstones) and growth. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	char *key;
	long val;
	int state; /* 0 empty, 1 full, 2 deleted */
};
struct table {
	struct slot *s;
	size_t cap, len;
};

static unsigned long hash(const char *k) {
	unsigned long h = 5381;
	while (*k)
		h = h * 33 + (unsigned char)*k++;
	return h;
}

static void put(struct table *t, const char *k, long v);

static void grow(struct table *t) {
	struct slot *old = t->s;
	size_t oc = t->cap;
	t->cap = oc ? oc * 2 : 16;
	t->s = calloc(t->cap, sizeof *t->s);
	t->len = 0;
	for (size_t i = 0; i < oc; i++)
		if (old[i].state == 1) {
			put(t, old[i].key, old[i].val);
			free(old[i].key);
		}
	free(old);
}

static void put(struct table *t, const char *k, long v) {
	if ((t->len + 1) * 4 > t->cap * 3)
		grow(t);
	size_t i = hash(k) & (t->cap - 1);
	long tomb = -1;
	while (t->s[i].state != 0) {
		if (t->s[i].state == 1 && strcmp(t->s[i].key, k) == 0) {
			t->s[i].val = v;
			return;
		}
		if (t->s[i].state == 2 && tomb < 0)
			tomb = (long)i;
		i = (i + 1) & (t->cap - 1);
	}
	if (tomb >= 0)
		i = (size_t)tomb;
	t->s[i].key = strdup(k);
	t->s[i].val = v;
	t->s[i].state = 1;
	t->len++;
}

static struct slot *find(struct table *t, const char *k) {
	if (!t->cap)
		return NULL;
	size_t i = hash(k) & (t->cap - 1);
	while (t->s[i].state != 0) {
		if (t->s[i].state == 1 && strcmp(t->s[i].key, k) == 0)
			return &t->s[i];
		i = (i + 1) & (t->cap - 1);
	}
	return NULL;
}

int main(void) {
	struct table t = {0};
	char key[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(key, sizeof key, "key%d", i * 7919 % 10007);
		put(&t, key, i);
	}
	for (int i = 0; i < 5000; i += 3) {
		snprintf(key, sizeof key, "key%d", i * 7919 % 10007);
		struct slot *s = find(&t, key);
		if (s) {
			free(s->key);
			s->key = NULL;
			s->state = 2;
			t.len--;
		}
	}
	long sum = 0;
	int found = 0;
	for (int i = 0; i < 10007; i++) {
		snprintf(key, sizeof key, "key%d", i);
		struct slot *s = find(&t, key);
		if (s) {
			found++;
			sum += s->val * (i % 13);
		}
	}
	printf("cap=%zu len=%zu found=%d sum=%ld\n", t.cap, t.len, found, sum);
	for (size_t i = 0; i < t.cap; i++)
		free(t.s[i].key);
	free(t.s);
	return found == (int)t.len ? 0 : 1;
}
