// SPDX-License-Identifier: GPL-2.0-only
/*
 * A worker pool, the shape of a server: message threads hand requests to
 * worker threads, each request a short computation, and a message thread
 * posts its next batch once every worker of the last one has answered.
 * The pool measures itself, with the clock, never with a scheduler's
 * figures:
 *   wakeup   from the message thread posting a request (just before its
 *            futex wake) to the worker running it
 *   request  from the post to the worker's answer
 * Prints one JSON line: requests, requests_per_s, wake_p50_us,
 * wake_p99_us, wake_max_us, request_p50_us, request_p99_us.
 *
 *   workerpool [-m MESSAGE_THREADS] [-w WORKERS_EACH] [-l LOOPS] -t SECS
 *
 * Defaults: 2 message threads of 8 workers, 2,000,000 loops of work per
 * request (an LCG step each; about 2 ms natively, 5 ms emulated), so
 * that 16 workers keep 2 CPUs queued deep, as a loaded server does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { IDLE, POSTED, QUIT };

struct samples {
	uint64_t *v;
	size_t n, cap;
};

struct group;

struct worker {
	_Atomic uint32_t state;	/* the futex word: IDLE, POSTED or QUIT */
	uint64_t posted;	/* ns, written before state becomes POSTED */
	struct group *g;
	struct samples wake, req;
	pthread_t tid;
};

struct group {
	_Atomic uint32_t pending;	/* workers of the batch yet to answer */
	struct worker *w;
	int nw;
	pthread_t tid;
};

static long loops = 2000000;
static uint64_t deadline;
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void die(const char *what)
{
	fprintf(stderr, "workerpool: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void add(struct samples *s, uint64_t v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		if (!(s->v = realloc(s->v, s->cap * sizeof(*s->v))))
			die("out of memory");
	}
	s->v[s->n++] = v;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t x = (uintptr_t)w, t;
	uint32_t st;
	long i;

	for (;;) {
		while ((st = atomic_load_explicit(&w->state, memory_order_acquire)) == IDLE)
			futex_wait(&w->state, IDLE);
		if (st == QUIT)
			return NULL;
		t = now_ns();
		add(&w->wake, t - w->posted);
		for (i = 0; i < loops; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		sink = x;
		add(&w->req, now_ns() - w->posted);
		atomic_store_explicit(&w->state, IDLE, memory_order_release);
		if (atomic_fetch_sub(&w->g->pending, 1) == 1)
			futex_wake(&w->g->pending);
	}
}

static void *message_main(void *arg)
{
	struct group *g = arg;
	uint32_t p;
	int i;

	while (now_ns() < deadline) {
		atomic_store(&g->pending, g->nw);
		for (i = 0; i < g->nw; i++) {
			g->w[i].posted = now_ns();
			atomic_store_explicit(&g->w[i].state, POSTED, memory_order_release);
			futex_wake(&g->w[i].state);
		}
		while ((p = atomic_load(&g->pending)))
			futex_wait(&g->pending, p);
	}
	for (i = 0; i < g->nw; i++) {
		atomic_store(&g->w[i].state, QUIT);
		futex_wake(&g->w[i].state);
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every worker's wakeups into @wake and requests into @req, each sorted. */
static void merge(struct group *gs, int ng, struct samples *wake, struct samples *req)
{
	struct worker *w;
	size_t k;
	int g, i;

	for (g = 0; g < ng; g++)
		for (i = 0; i < gs[g].nw; i++) {
			w = &gs[g].w[i];
			for (k = 0; k < w->wake.n; k++)
				add(wake, w->wake.v[k]);
			for (k = 0; k < w->req.n; k++)
				add(req, w->req.v[k]);
		}
	qsort(wake->v, wake->n, sizeof(*wake->v), cmp);
	qsort(req->v, req->n, sizeof(*req->v), cmp);
}

static double pct_us(const struct samples *s, double p)
{
	size_t k = (size_t)(p * (double)s->n);

	return s->n ? (double)s->v[k < s->n ? k : s->n - 1] / 1000.0 : 0;
}

static long arg(const char *opt, const char *val, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "workerpool: -%s takes a whole number from %ld to %ld (got '%s')\n",
			opt, lo, hi, val);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	int ng = 2, nw = 8, g, i, o;
	long secs = 0;
	struct group *gs;
	struct samples wake = { 0 }, req = { 0 };
	uint64_t start;
	double took;

	while ((o = getopt(argc, argv, "m:w:l:t:")) != -1) {
		switch (o) {
		case 'm': ng = arg("m", optarg, 1, 1024); break;
		case 'w': nw = arg("w", optarg, 1, 1024); break;
		case 'l': loops = arg("l", optarg, 0, LONG_MAX); break;
		case 't': secs = arg("t", optarg, 1, 86400); break;
		default:
			fprintf(stderr, "usage: workerpool [-m MESSAGE_THREADS] [-w WORKERS_EACH] [-l LOOPS] -t SECS\n");
			return 2;
		}
	}
	if (!secs) {
		fprintf(stderr, "workerpool: say how long to run: -t SECS\n");
		return 2;
	}
	if (!(gs = calloc(ng, sizeof(*gs))))
		die("out of memory");
	start = now_ns();
	deadline = start + (uint64_t)secs * 1000000000ULL;
	for (g = 0; g < ng; g++) {
		gs[g].nw = nw;
		if (!(gs[g].w = calloc(nw, sizeof(*gs[g].w))))
			die("out of memory");
		for (i = 0; i < nw; i++) {
			gs[g].w[i].g = &gs[g];
			if ((errno = pthread_create(&gs[g].w[i].tid, NULL, worker_main, &gs[g].w[i])))
				die("pthread_create");
		}
	}
	for (g = 0; g < ng; g++)
		if ((errno = pthread_create(&gs[g].tid, NULL, message_main, &gs[g])))
			die("pthread_create");
	for (g = 0; g < ng; g++) {
		pthread_join(gs[g].tid, NULL);
		for (i = 0; i < nw; i++)
			pthread_join(gs[g].w[i].tid, NULL);
	}
	took = (double)(now_ns() - start) / 1e9;
	merge(gs, ng, &wake, &req);
	printf("{\"requests\": %zu, \"requests_per_s\": %.1f, \"wake_p50_us\": %.1f, \"wake_p99_us\": %.1f, "
	       "\"wake_max_us\": %.1f, \"request_p50_us\": %.1f, \"request_p99_us\": %.1f}\n",
	       req.n, (double)req.n / took, pct_us(&wake, 0.5), pct_us(&wake, 0.99),
	       wake.n ? (double)wake.v[wake.n - 1] / 1000.0 : 0, pct_us(&req, 0.5), pct_us(&req, 0.99));
	return 0;
}
