/* time() and clock_gettime(): prints only facts that do not vary between
 * runs (monotonicity, plausibility, agreement of clocks). */
#include <stdio.h>
#include <time.h>

int main(void) {
	struct timespec m1, m2, r1;
	time_t t0 = time(NULL);
	if (clock_gettime(CLOCK_MONOTONIC, &m1) != 0 || clock_gettime(CLOCK_REALTIME, &r1) != 0)
		return 2;
	volatile unsigned long spin = 0;
	for (unsigned long i = 0; i < 200000; i++)
		spin += i;
	if (clock_gettime(CLOCK_MONOTONIC, &m2) != 0)
		return 3;
	time_t t1 = time(NULL);
	long long d = (m2.tv_sec - m1.tv_sec) * 1000000000LL + (m2.tv_nsec - m1.tv_nsec);
	printf("monotonic=%d\n", d >= 0);
	printf("nsec in range=%d\n", m1.tv_nsec >= 0 && m1.tv_nsec < 1000000000L);
	printf("time plausible=%d\n", t0 > 1600000000 && t1 >= t0);
	printf("realtime~time=%d\n", r1.tv_sec >= t0 - 1 && r1.tv_sec <= t1 + 1);
	struct tm tm;
	time_t fixed = 1700000000;
	gmtime_r(&fixed, &tm);
	char buf[64];
	strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
	printf("gmtime=%s yday=%d wday=%d\n", buf, tm.tm_yday, tm.tm_wday);
	printf("spin=%lu\n", (unsigned long)spin);
	return 0;
}
