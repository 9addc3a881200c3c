/* File I/O: writes files in the directory given as argv[1] with stdio and
 * with POSIX calls, reads them back, prints checksums, removes them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: fileio DIR\n");
		return 2;
	}
	char path[4096], path2[4096];
	snprintf(path, sizeof path, "%s/fileio-a.txt", argv[1]);
	snprintf(path2, sizeof path2, "%s/fileio-b.bin", argv[1]);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "cannot create file\n");
		return 3;
	}
	for (int i = 0; i < 1000; i++)
		fprintf(f, "line %d value %d\n", i, i * i % 977);
	fclose(f);
	f = fopen(path, "r");
	if (!f)
		return 4;
	char line[128];
	unsigned long sum = 0;
	int lines = 0;
	while (fgets(line, sizeof line, f)) {
		for (char *p = line; *p; p++)
			sum = sum * 31 + (unsigned char)*p;
		lines++;
	}
	long pos = ftell(f);
	fclose(f);
	printf("stdio: lines=%d bytes=%ld sum=%lu\n", lines, pos, sum);

	int fd = open(path2, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0)
		return 5;
	unsigned char buf[8192];
	for (int i = 0; i < (int)sizeof buf; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	for (int k = 0; k < 16; k++)
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			return 6;
	off_t end = lseek(fd, 0, SEEK_CUR);
	lseek(fd, 1000, SEEK_SET);
	ssize_t n = read(fd, buf, 100);
	unsigned s2 = 0;
	for (int i = 0; i < n; i++)
		s2 += buf[i] * (unsigned)(i + 1);
	struct stat st;
	if (fstat(fd, &st) != 0)
		return 7;
	close(fd);
	printf("posix: end=%ld read=%zd sum=%u size=%lld\n", (long)end, n, s2, (long long)st.st_size);
	int missing = open("/nonexistent-gxbit-dir/x", O_RDONLY);
	printf("missing=%d\n", missing);
	if (unlink(path) != 0 || unlink(path2) != 0)
		return 8;
	printf("removed=%d\n", access(path, F_OK) != 0);
	return 0;
}
