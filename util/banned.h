/* Functions nextbot never uses: unbounded copies and unchecked conversions. */
#ifndef UTIL_BANNED_H
#define UTIL_BANNED_H

#define BANNED(func) sorry_##func##_is_banned_use_strbuf_or_strtol

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef gets
#define gets(x) BANNED(gets)

#endif
