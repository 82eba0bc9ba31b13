/* Sizes in configs and messages: "8G", "512MiB" in, "8 GiB" out. */
#ifndef UTIL_SIZE_H
#define UTIL_SIZE_H

#include "util/strbuf.h"

/*
 * Parses a size: a number of bytes ("1048576") or a number with a binary unit
 * K, M, G, T, optionally followed by "iB" or "B" ("512M", "8GiB", "16G"; all powers
 * of 1024, as memory limits are).  Returns 0 and *out > 0, or NB_EINVALID.
 */
int size_parse(long long *out, const char *s);

/* Appends `bytes` as people read a limit: "8 GiB", "512 MiB", "1.5 GiB", "300 bytes". */
void size_format(struct strbuf *sb, long long bytes);

#endif
