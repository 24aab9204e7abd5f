/* The GDB remote serial protocol's framing: $data#checksum, acknowledged with + or -. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/write_all.h"
#include "debugger/internal.h"

static bool no_ack;

void packet_no_ack(void)
{
	no_ack = true;
}

bool packet_acks_off(void)
{
	return no_ack;
}

static int read_byte(int fd)
{
	unsigned char c;
	for (;;) {
		ssize_t n = read(fd, &c, 1);
		if (n == 1)
			return c;
		if (n < 0 && errno == EINTR)
			continue; /* one of detrun's own signals */
		return -1;
	}
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int packet_read(int fd, char *buf, size_t size)
{
	for (;;) {
		int c = read_byte(fd);
		if (c < 0)
			return -1;
		if (c == 3)
			return 0;
		if (c != '$')
			continue; /* acks of our packets, noise */
		size_t len = 0;
		unsigned sum = 0;
		while ((c = read_byte(fd)) >= 0 && c != '#') {
			sum += (unsigned)c;
			if (len + 1 < size)
				buf[len++] = (char)c;
		}
		int h = read_byte(fd), l = read_byte(fd);
		if (c < 0 || h < 0 || l < 0)
			return -1;
		buf[len] = 0;
		bool good = hex_digit(h) * 16 + hex_digit(l) == (int)(sum & 0xff);
		if (!no_ack && write_all(fd, good ? "+" : "-", 1) < 0)
			return -1;
		if (good || no_ack)
			return (int)len;
	}
}

int packet_send(int fd, const char *data, size_t len)
{
	static char out[PACKET_MAX * 2 + 8];
	size_t n = 0;
	unsigned sum = 0;
	out[n++] = '$';
	for (size_t i = 0; i < len && n < sizeof(out) - 6; i++) {
		char c = data[i];
		if (c == '$' || c == '#' || c == '}' || c == '*') { /* escaped: } then c ^ 0x20 */
			out[n++] = '}';
			sum += '}';
			c ^= 0x20;
		}
		out[n++] = c;
		sum += (unsigned char)c;
	}
	n += (size_t)snprintf(out + n, 4, "#%02x", sum & 0xff);
	for (int tries = 0; tries < 10; tries++) {
		if (write_all(fd, out, n) < 0)
			return -1;
		if (no_ack)
			return 0;
		int c;
		while ((c = read_byte(fd)) >= 0 && c != '+' && c != '-')
			;
		if (c < 0)
			return -1;
		if (c == '+')
			return 0;
	}
	return -1;
}

int packet_sendf(int fd, const char *fmt, ...)
{
	char buf[PACKET_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = (int)strlen(buf);
	return packet_send(fd, buf, (size_t)n);
}

void hex_encode(char *out, const void *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = 0;
}

long hex_decode(void *out, const char *hex, size_t max)
{
	unsigned char *p = out;
	size_t n = 0;
	for (; n < max && hex[0] && hex[1]; hex += 2, n++) {
		int h = hex_digit(hex[0]), l = hex_digit(hex[1]);
		if (h < 0 || l < 0)
			return -1;
		p[n] = (unsigned char)(h * 16 + l);
	}
	return (long)n;
}

uint64_t hex_number(const char **p)
{
	uint64_t v = 0;
	int d;
	while ((d = hex_digit(**p)) >= 0) {
		v = v * 16 + (uint64_t)d;
		(*p)++;
	}
	return v;
}
