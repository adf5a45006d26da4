/* sysinfo_id.c - the machine's identity (`machine_id`): osmeter's
 * application-specific ID of the machine, as systemd makes one
 * (sd_id128_get_machine_app_specific(3); `systemd-id128 machine-id
 * --app-specific=57032c07d9184336b4cf11796e44f07c` prints the same):
 * HMAC-SHA256 keyed with the 16 bytes of /etc/machine-id (else
 * /var/lib/dbus/machine-id) over osmeter's application ID, its first 16
 * bytes made a version-4 UUID, as 32 lowercase hex digits. The machine ID
 * itself is never written: systemd asks that it be kept confidential and
 * hashed so, and the hash tells one machine from another just as well.
 * null when neither file holds a machine ID (32 hex digits, not all zero:
 * an image's empty file, "uninitialized" on a first boot).
 *
 * Not DMI's product_uuid: only root may read it, and a host's identity must
 * not depend on whether the probe ran with become. See docs/fleet.md, "One
 * machine, one host". SHA-256 is FIPS 180-4, HMAC RFC 2104. */
#include "sysinfo_int.h"

#include <stdint.h>
#include <string.h>

/* osmeter's application ID (a random UUID, fixed for good). */
static const uint8_t app_id[16] = {0x57, 0x03, 0x2c, 0x07, 0xd9, 0x18, 0x43, 0x36,
				   0xb4, 0xcf, 0x11, 0x79, 0x6e, 0x44, 0xf0, 0x7c};

struct sha256 {
	uint32_t h[8];
	uint8_t block[64];
	size_t used;
	uint64_t bytes;
};

static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(struct sha256 *s, const uint8_t *p)
{
	uint32_t w[64], v[8];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(v, s->h, sizeof(v));
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = v[7] + (ror(v[4], 6) ^ ror(v[4], 11) ^ ror(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6]))
			      + k256[i] + w[i];
		uint32_t t2 = (ror(v[0], 2) ^ ror(v[0], 13) ^ ror(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		s->h[i] += v[i];
}

static void sha256_init(struct sha256 *s)
{
	static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
				       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(s->h, h0, sizeof(h0));
	s->used = 0;
	s->bytes = 0;
}

static void sha256_add(struct sha256 *s, const uint8_t *p, size_t n)
{
	s->bytes += n;
	while (n > 0) {
		size_t take = sizeof(s->block) - s->used < n ? sizeof(s->block) - s->used : n;
		memcpy(s->block + s->used, p, take);
		s->used += take;
		p += take;
		n -= take;
		if (s->used == sizeof(s->block)) {
			sha256_block(s, s->block);
			s->used = 0;
		}
	}
}

static void sha256_end(struct sha256 *s, uint8_t out[32])
{
	uint64_t bits = s->bytes * 8;
	uint8_t pad[72] = {0x80};
	size_t n = (s->used < 56 ? 56 : 120) - s->used;
	for (int i = 0; i < 8; i++)
		pad[n + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_add(s, pad, n + 8);
	for (int i = 0; i < 8; i++)
		for (int b = 0; b < 4; b++)
			out[4 * i + b] = (uint8_t)(s->h[i] >> (24 - 8 * b));
}

/* HMAC-SHA256 with a key of at most 64 bytes. */
static void hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *msg, size_t len, uint8_t out[32])
{
	uint8_t pad[64], inner[32];
	struct sha256 s;
	for (int round = 0; round < 2; round++) {
		memset(pad, 0, sizeof(pad));
		memcpy(pad, key, key_len);
		for (size_t i = 0; i < sizeof(pad); i++)
			pad[i] ^= round == 0 ? 0x36 : 0x5c;
		sha256_init(&s);
		sha256_add(&s, pad, sizeof(pad));
		if (round == 0)
			sha256_add(&s, msg, len);
		else
			sha256_add(&s, inner, sizeof(inner));
		sha256_end(&s, round == 0 ? inner : out);
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The 16 bytes of a machine-id file: 32 hex digits (then a newline), not all zero. */
static bool read_machine_id(const char *path, uint8_t id[16])
{
	char text[SMALL];
	if (!si_read_file_trim(path, text, sizeof(text)) || strlen(text) != 32)
		return false;
	uint8_t any = 0;
	for (int i = 0; i < 16; i++) {
		int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		id[i] = (uint8_t)(hi << 4 | lo);
		any |= id[i];
	}
	return any != 0;
}

bool si_machine_app_id(const char *const *files, size_t n, char out[33])
{
	uint8_t id[16], mac[32];
	for (size_t f = 0; f < n; f++) {
		if (!read_machine_id(files[f], id))
			continue;
		hmac_sha256(id, sizeof(id), app_id, sizeof(app_id), mac);
		mac[6] = (uint8_t)((mac[6] & 0x0f) | 0x40); /* a version-4 UUID, as systemd makes it */
		mac[8] = (uint8_t)((mac[8] & 0x3f) | 0x80);
		for (int i = 0; i < 16; i++)
			snprintf(out + 2 * i, 3, "%02x", mac[i]);
		return true;
	}
	return false;
}

void si_w_machine_id(struct osm_json *j, const char *key)
{
	static const char *const files[] = {"/etc/machine-id", "/var/lib/dbus/machine-id"};
	char hex[33];
	if (si_machine_app_id(files, ARRAY_SIZE(files), hex))
		osm_json_str(j, key, hex);
	else
		osm_json_null(j, key);
}
