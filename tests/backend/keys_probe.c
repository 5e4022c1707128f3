/* keys-probe: the kernel key calls the keyring tests need, as one static
 * program that runs on the host and inside a sandbox alike
 * (tests/node/backend-userns.test.mjs). Prints one line; an error is
 * "error <ENAME>".
 *
 *   keys-probe add DESC user|session      adds a "user" key, prints its serial
 *   keys-probe read SERIAL                prints the key's payload
 *   keys-probe search DESC user|session   prints the serial found there
 *   keys-probe invalidate SERIAL
 *   keys-probe fill                       in a new session keyring, adds keys until the
 *                                         kernel refuses: prints "<count> <ENAME>", then
 *                                         holds them until stdin ends
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long add_key(const char *desc, const char *payload, long keyring)
{
	return syscall(SYS_add_key, "user", desc, payload, strlen(payload), keyring);
}

static int fail(void)
{
	const char *name = strerrorname_np(errno);
	printf("error %s\n", name ? name : "?");
	return 1;
}

static long keyring_of(const char *name)
{
	return strcmp(name, "session") == 0 ? KEY_SPEC_SESSION_KEYRING : KEY_SPEC_USER_KEYRING;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	if (strcmp(cmd, "add") == 0 && argc == 4) {
		long serial = add_key(argv[2], "e2bw-key-probe-secret", keyring_of(argv[3]));
		if (serial < 0)
			return fail();
		printf("%ld\n", serial);
	} else if (strcmp(cmd, "read") == 0 && argc == 3) {
		char buf[256];
		long n = syscall(SYS_keyctl, KEYCTL_READ, atol(argv[2]), buf, sizeof buf - 1);
		if (n < 0)
			return fail();
		buf[n < (long)sizeof buf - 1 ? n : (long)sizeof buf - 1] = '\0';
		printf("%s\n", buf);
	} else if (strcmp(cmd, "search") == 0 && argc == 4) {
		long serial = syscall(SYS_keyctl, KEYCTL_SEARCH, keyring_of(argv[3]), "user", argv[2], 0);
		if (serial < 0)
			return fail();
		printf("%ld\n", serial);
	} else if (strcmp(cmd, "invalidate") == 0 && argc == 3) {
		if (syscall(SYS_keyctl, KEYCTL_INVALIDATE, atol(argv[2])) < 0)
			return fail();
		printf("ok\n");
	} else if (strcmp(cmd, "fill") == 0 && argc == 2) {
		/* A session keyring of its own: the keys go when this process does. */
		if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0)
			return fail();
		long count = 0;
		for (; count < 100000; count++) {
			char desc[32];
			snprintf(desc, sizeof desc, "e2bw-fill-%ld", count);
			if (add_key(desc, "x", KEY_SPEC_SESSION_KEYRING) < 0)
				break;
		}
		const char *name = strerrorname_np(errno);
		printf("%ld %s\n", count, name ? name : "?");
		fflush(stdout);
		char c;
		while (read(0, &c, 1) > 0)
			;
	} else {
		fprintf(stderr, "usage: keys-probe add|read|search|invalidate|fill ...\n");
		return 2;
	}
	return 0;
}
