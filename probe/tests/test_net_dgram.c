/* test_net_dgram.c - the datagram round trip's loss deadline (net_dgram.c)
 * against a scripted peer on a socketpair: an answer that comes after a
 * stale datagram but within NET_LOSS_TIMEOUT_MS is timed; one that comes
 * later is a loss, declared at the deadline (not a whole SO_RCVTIMEO after
 * the stale datagram), and the next round trip is answered. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench/net.h"
#include "clock.h"
#include "tap.h"

#define STALE UINT64_MAX

static size_t fill_seq(struct net_dgram *d, uint64_t seq)
{
	memcpy(d->tx, &seq, sizeof(seq));
	return sizeof(seq);
}

static int match_seq(const struct net_dgram *d, size_t n, uint64_t seq)
{
	return n == sizeof(seq) && memcmp(d->rx, &seq, sizeof(seq)) == 0;
}

static void send_seq(int fd, uint64_t seq)
{
	if (send(fd, &seq, sizeof(seq), 0) != (ssize_t)sizeof(seq))
		_exit(3);
}

/* The scripted peer: takes the first datagram, sends a stale one at
 * stale_ms, and the first datagram's answer at answer_ms; meanwhile any
 * later datagram is echoed at once. Then exits. */
static void peer(int fd, int stale_ms, int answer_ms)
{
	uint64_t first, seq;
	if (recv(fd, &first, sizeof(first), 0) != (ssize_t)sizeof(first))
		_exit(3);
	int64_t t0 = osm_mono_ns();
	int stale_sent = 0;
	for (;;) {
		int64_t now_ms = (osm_mono_ns() - t0) / 1000000;
		if (!stale_sent && now_ms >= stale_ms) {
			send_seq(fd, STALE);
			stale_sent = 1;
		}
		if (now_ms >= answer_ms) {
			send_seq(fd, first);
			_exit(0);
		}
		int64_t next = stale_sent ? answer_ms : stale_ms;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, (int)(next - now_ms)) > 0 && recv(fd, &seq, sizeof(seq), 0) == (ssize_t)sizeof(seq))
			send_seq(fd, seq);
	}
}

struct outcome {
	int status;
	double elapsed_ns;
	struct net_dgram d;
	double self_ns;
};

static struct outcome round_trip(int stale_ms, int answer_ms)
{
	struct outcome o = {.status = -1};
	int sv[2];
	if (!ok(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "socketpair"))
		return o;
	if (!ok(net_timeouts(sv[0], NET_LOSS_TIMEOUT_MS) == 0, "SO_RCVTIMEO as the benchmarks set it"))
		return o;
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		peer(sv[1], stale_ms, answer_ms);
	}
	close(sv[1]);
	unsigned char tx[8], rx[64];
	o.d = (struct net_dgram){.fd = sv[0], .tx = tx, .rx = rx, .rx_cap = sizeof(rx),
				 .fill = fill_seq, .match = match_seq};
	struct net_peer np = {.addr = "scripted", .what = "round trips"};
	struct osm_ctx *ctx = calloc(1, sizeof(*ctx));
	int64_t t0 = osm_mono_ns();
	o.status = net_dgram_run(ctx, &np, &o.d, 1);
	o.elapsed_ns = (double)(osm_mono_ns() - t0);
	o.self_ns = ctx->self_ns;
	if (o.status != OSM_OK)
		diag("net_dgram_run: %s", ctx->msg);
	free(ctx);
	int ws = 0;
	waitpid(pid, &ws, 0);
	ok(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the scripted peer ran its script");
	close(sv[0]);
	return o;
}

static void test_answer_after_a_stale_datagram_is_timed(void)
{
	struct outcome o = round_trip(200, 400);
	is_int(o.status, OSM_OK, "answered");
	is_int((int64_t)o.d.lost, 0, "nothing lost");
	is_int((int64_t)o.d.stale, 1, "the stale datagram counted");
	ok(o.self_ns >= 350e6 && o.self_ns < 1e9, "timed from send to the answer: %.0f ns", o.self_ns);
}

static void test_answer_past_the_deadline_is_a_loss_at_the_deadline(void)
{
	/* Stale at 0.6 s re-arms nothing: the loss is declared at 1 s, not at
	 * 1.6 s, and the answer at 1.5 s is never timed. */
	struct outcome o = round_trip(600, 1500);
	is_int(o.status, OSM_OK, "the retried round trip answered");
	is_int((int64_t)o.d.lost, 1, "the first round trip lost");
	is_int((int64_t)o.d.seq, 2, "tried again with the next sequence number");
	ok(o.self_ns < 300e6, "only the answered retry timed: %.0f ns", o.self_ns);
	ok(o.elapsed_ns >= 0.95e9 && o.elapsed_ns < 1.3e9, "the loss declared at the 1 s deadline: %.0f ns",
	   o.elapsed_ns);
}

int main(void)
{
	test_answer_after_a_stale_datagram_is_timed();
	test_answer_past_the_deadline_is_a_loss_at_the_deadline();
	return done_testing();
}
