/*
 * Internal to cc/ (and its unit tests): what the shim and the service share, the
 * command line's reading, the wire format and the store.  bot/ includes cc/cc.h.
 */
#ifndef CC_CC_INT_H
#define CC_CC_INT_H

#include <stddef.h>
#include <stdint.h>
#include "cc/cc.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/*
 * A compiler command line as the cache reads it.  Cacheable is one C or C++ source
 * compiled (-c) to one object, with options the cache knows: the shim runs `pre`
 * with `-E -fdirectives-only` in the box (the text whose hash the key holds, and
 * the -MD file), the service runs the compiler with `send` (every option but -c,
 * -o and those that write the dependency file; the source among them) on the files
 * the key names.  Everything else (linking, several sources, -S, -save-temps,
 * -fplugin, @files, options that read or write files of their own, unknown
 * options) is not cacheable: the real compiler runs as it was asked, uncached.
 */
struct cc_args {
	const char *source;     /* borrowed from argv */
	const char *output;     /* -o's value, or NULL: the source's base name with .o */
	int deps;               /* -MD or -MMD: the -E pass writes the dependency file */
	int pp_deps;            /* -Wp,-MD,F or -Wp,-MMD,F (kbuild's): the preprocessor
				   itself writes F, in the -E pass too; not named for it */
	struct strvec pre;      /* the -E pass: every option but -c and -o, the source too */
	struct strvec send;     /* the service's: `pre` without dependency-file options */
	const char *why;        /* not cacheable: a static reason */
};
#define CC_ARGS_INIT { .pre = STRVEC_INIT, .send = STRVEC_INIT }

/*
 * Reads argv[0..argc) (the options after the compiler's name).  Returns 1
 * cacheable, 0 not (out->why says why).  `out` borrows argv's strings in
 * source/output; release it with cc_args_release().
 */
int cc_args_parse(struct cc_args *out, int argc, const char *const *argv);
void cc_args_release(struct cc_args *a);

/*
 * The service's check of a request's options, which any program in a box may have
 * written: 0 when they are what cc_args_parse() puts in `send` (one source, options
 * it knows, their values), else -1 with *why set.
 */
int cc_args_check_send(const char *const *args, size_t n, const char **why);

/*
 * Whether `name` (a base name) is one the shims stand in for: cc, c89, c99, gcc,
 * g++, c++, clang, clang++, with a target prefix (x86_64-linux-gnu-) and a
 * version suffix (-12), and not gcc-ar, gcc-nm and the like.
 */
int cc_compiler_name(const char *name);

/*
 * Whether `path` is an ELF program.  A script standing in for a compiler (Debian's
 * c99) runs another one found on PATH, which the key would not name: it runs
 * uncached, and the compiler it calls goes through its own shim.
 */
int cc_is_elf(const char *path);

/*
 * The preprocessing that makes the text the key holds: every included file's text,
 * macros not expanded (gcc's -fdirectives-only; clang has no such option and its
 * -frewrite-includes does the same), by the real compiler's name.
 */
const char *cc_pp_option(const char *real);

/* Whether a compile's preprocessed text names the time it is compiled at. */
int cc_text_timed(const char *text, size_t len);

/* ---- direct mode (cc/direct.c) ---- */

/*
 * Calls fn(data, name) for each file name the linemarkers of a preprocessed text
 * give (`# 12 "inc/x.h" 1`), in order, escapes undone; -1 when a marker is
 * malformed or fn returns < 0, else 0.
 */
int cc_text_names(const char *t, size_t len, int (*fn)(void *data, const char *name),
		  void *data);

/*
 * The folders a compiler run with -v searches for `#include "…"` only, for both,
 * and those it ignored as absent, from its messages `v`: only the part before the
 * first "End of search list." line, which it prints before reading any source.
 * 0, or -1 when there is no search list.
 */
struct cc_search {
	struct strvec quote, bracket, ignored;
};
#define CC_SEARCH_INIT { .quote = STRVEC_INIT, .bracket = STRVEC_INIT, .ignored = STRVEC_INIT }
int cc_search_dirs(struct cc_search *out, const char *v);
void cc_search_release(struct cc_search *s);

/*
 * The names a file's #include, #include_next and #import directives give, to fn
 * with their kind, wherever they are (in `#if 0` too: more names only ask more).
 * -1 when the file has one it cannot read for sure (a computed include, a line
 * marker or #line, which would make the text's markers lie about who includes
 * whom, a raw string, a comment a directive does not end), or fn says -1.
 */
#define CC_INCLUDE_QUOTE 1
#define CC_INCLUDE_NEXT 2
int cc_include_names(const char *bytes, size_t n, int (*fn)(void *data, int kind, const char *name),
		     void *data);

/*
 * A manifest, which only the service writes, when it compiled itself: the key of
 * the object (K), the text's hash (T), every file the text came from, as its
 * linemarkers name them, with its hash (F), in order, and every path that must
 * not exist for the compiler to find those same files again (C): for each include
 * directive of those files, the places searched before the one it found (none of
 * which existed then), and in the folders it ignored as absent.  The store holds
 * several for one direct key, one after another.
 */
struct cc_manifest {
	char key[SHA256_HEXSZ + 1], text[SHA256_HEXSZ + 1];
	struct strvec absent, paths, hashes;
};
#define CC_MANIFEST_INIT { .absent = STRVEC_INIT, .paths = STRVEC_INIT, .hashes = STRVEC_INIT }
#define CC_MANIFESTS_MAX 4
/* Reads the manifest at `s` into `m` (empty); returns where the next one starts. */
const char *cc_manifest_parse(struct cc_manifest *m, const char *s);
void cc_manifest_release(struct cc_manifest *m);
/*
 * Whether `m` holds here (paths from the working directory): every file it lists
 * has its hash, and nothing is at its C paths (stat fails with ENOENT or ENOTDIR).
 * 1, or 0 with *why.
 */
int cc_manifest_usable(const struct cc_manifest *m, const char **why);

/* `p` made absolute from `cwd` and plain: "." and ".." folded (caller frees). */
char *cc_path_absolute(const char *cwd, const char *p);
/* The folder of a path as a linemarker names it: "" for a bare name; NULL for "/x". */
char *cc_dir_of(const char *p);
/* dir/name, or name below the empty folder (the working directory). */
char *cc_path_join(const char *dir, const char *name);

/* ---- the wire between shim and service (cc/proto.c) ---- */

#define CC_MAGIC "NBCC2"        /* first bytes of a request, with its NUL */
#define CC_MAGIC_DIRECT "NBCD1" /* a direct request: its H is the source's SHA-256, no F */
#define CC_MAX_TEXT ((uint64_t)64 << 20)   /* preprocessed text */
#define CC_MAX_FILES_BYTES ((uint64_t)64 << 20) /* the files a miss sends, together */
#define CC_MAX_OBJECT ((uint64_t)512 << 20)
#define CC_MAX_STDERR (1u << 20)
#define CC_MAX_FIELDS 8192
#define CC_MAX_FIELD (64u << 10)
#define CC_MAX_HEADER (4u << 20) /* all fields together */
#define CC_KEEPALIVE_SECONDS 5   /* the service says it is still working this often */
#define CC_SILENCE_SECONDS 60    /* either side gives up after this long without a word */

/*
 * A request's fields, in order: P, D, H once, then A, E and F any number of times
 * in that order.  Paths are absolute and plain (no "." or ".." parts, no "//").
 */
enum cc_field {
	CC_F_COMPILER = 'P', /* the compiler the shim found after itself on PATH */
	CC_F_CWD = 'D',      /* the working directory */
	CC_F_TEXT = 'H',     /* SHA-256 (hex) of the box's -E -fdirectives-only text */
	CC_F_ARG = 'A',      /* one option (or the source), as cc_args.send */
	CC_F_ENV = 'E',      /* "LANG=…", "LC_ALL=…", "LC_MESSAGES=…", "LC_CTYPE=…" */
	CC_F_FILE = 'F',     /* "<SHA-256 hex> <path>": a file the text came from, in a
				place of the box's own (not the system every box shares) */
};

/* What the service answers, after any number of CC_R_ALIVE bytes. */
enum cc_reply {
	CC_R_ALIVE = 'K',    /* still compiling */
	CC_R_NEED = 'N',     /* a miss: send the F files' bytes, each as u64 length + bytes */
	CC_R_OBJECT = 'O',   /* u8 hit, u32 stderr length, stderr, u64 object length, object */
	CC_R_FALLBACK = 'X', /* u32 length, reason: compile it yourself, uncached */
	CC_R_MANIFESTS = 'M', /* to a direct request: u32 length, the manifests; one
				 request of either kind may follow on the connection */
};

struct cc_file {
	char hash[SHA256_HEXSZ + 1];
	char *path;
};

struct cc_request {
	char *compiler, *cwd;
	char text[SHA256_HEXSZ + 1];
	struct strvec args, env;
	struct cc_file *files;
	size_t files_nr, files_alloc;
	int direct;             /* CC_MAGIC_DIRECT: `text` is the source's hash */
};
#define CC_REQUEST_INIT { .args = STRVEC_INIT, .env = STRVEC_INIT }
void cc_request_release(struct cc_request *r);
void cc_request_add_file(struct cc_request *r, const char hash[SHA256_HEXSZ + 1],
			 const char *path);

/* Writes a whole request; 0 or -1 (errno set). */
int cc_request_write(int fd, const struct cc_request *r);
/*
 * Reads a request from a client nobody vouches for: every length capped, every
 * field checked for form.  Returns 0, or -1 with *why set.
 */
int cc_request_read(struct cc_request *out, int fd, const char **why);

/* Whether `p` is an absolute path without ".", ".." or empty parts, nor a control character. */
int cc_path_plain(const char *p);
/* Whether `path` is `dir` or below it. */
int cc_path_under(const char *path, const char *dir);
/*
 * Whether `path` is in a place of the box's own (below one of `roots`: the hidden
 * workdir, /tmp, …, and not below a folder `shown` from the host), whose files
 * differ from box to box; anything else is the system every box shares.
 */
int cc_path_private(const char *path, const struct strvec *roots, const struct strvec *shown);

/* The file in the run folder that lists those places: "private PATH" and "shown PATH" lines. */
#define CC_PLACES_FILE "places"

struct cc_serve_opts;
/* Those places for a service: the box's own (runcmd_box_private()), o->hide; o->shown. */
void cc_places(struct strvec *private, struct strvec *shown, const struct cc_serve_opts *o);

/* Reads and writes exactly `len` bytes (EINTR retried); 0 or -1. */
int cc_read_full(int fd, void *buf, size_t len);
int cc_write_full(int fd, const void *buf, size_t len);
void cc_put_u32(unsigned char *p, uint32_t v);
void cc_put_u64(unsigned char *p, uint64_t v);
uint32_t cc_get_u32(const unsigned char *p);
uint64_t cc_get_u64(const unsigned char *p);

/* ---- the service over TCP, for a cluster's nodes (cc/remote.c, cc/relay.c) ---- */

/*
 * A node's relay (outside the box, as the runner user) opens each connection with
 * this line: CC_TOKEN_MAGIC, a space, the night's token (CC_TOKEN_HEXSZ hex digits,
 * from a file only the runner user reads) and a newline; then the shim's bytes
 * follow as on the socket of the host.
 */
#define CC_TOKEN_MAGIC "NBCCT1"
#define CC_TOKEN_LINE (sizeof(CC_TOKEN_MAGIC) + CC_TOKEN_HEXSZ + 1)

/*
 * "HOST:PORT" or "[V6]:PORT" split (caller frees both); 0, or -1 when it is not of
 * that form or the port is not a number 0-65535.
 */
int cc_addr_split(const char *addr, char **host, char **port);

/* Reads a token file (CC_TOKEN_HEXSZ hex digits, a newline may follow): 0 or -1. */
int cc_token_read(char out[CC_TOKEN_HEXSZ + 1], const char *path);

/*
 * Whether a TCP connection's first line carries `token`: 1, or 0 (a wrong or
 * missing line, or silence for `seconds`).
 */
int cc_remote_admit(int fd, const char *token, int seconds);

/*
 * `nextbot-cc --relay HOST:PORT TOKENFILE SOCK -- CMD…`: listens at SOCK (a place
 * the box binds over its socket), runs CMD, and carries each connection to the
 * service at HOST:PORT after the token line; exits as CMD did.
 */
int cc_relay_main(int argc, char **argv);

/* ---- the store (cc/store.c): entries by key, at most `max` bytes, least recently used out ---- */

struct cc_store;

/*
 * Opens (making it 0700) the store at `dir`; trims it to `max`, and to leave its
 * disk `min_free` bytes free (0: no floor), at once.
 */
int cc_store_open(struct cc_store **out, const char *dir, long long max, long long min_free);
void cc_store_free(struct cc_store *s);

/*
 * An entry: the compiler's stderr and the object it wrote.  cc_store_get() returns
 * 1 with an open descriptor positioned at the stderr bytes and the two lengths
 * (the caller closes it), 0 when there is none.  It marks the entry used.
 */
int cc_store_get(struct cc_store *s, const char key[SHA256_HEXSZ + 1], int *fd,
		 uint32_t *stderr_len, uint64_t *object_len);
/*
 * Stores stderr and the object file `object_fd` (from its start), room made first
 * (the least recently used out); one that does not fit under `max` and above the
 * disk's floor even so is not kept (0 all the same).
 */
int cc_store_put(struct cc_store *s, const char key[SHA256_HEXSZ + 1], const char *err,
		 uint32_t err_len, int object_fd, uint64_t object_len);
/* Bytes held now. */
long long cc_store_bytes(struct cc_store *s);

#endif
