/*
 * merge/'s door for the work repository and its history (what bot/ includes of it; no
 * libgit2 type): the git library's start and stop (merge_global_*), the repository
 * (repo_*: open, refs, good tips, a file of a commit), repacking it (gc_*), finding
 * patches (lookup_*), who did what (activity_*), trailers and the one definition of
 * "reviewed" (trailer_*), two versions of a series compared (rangediff_*).
 */
#ifndef MERGE_REPO_H
#define MERGE_REPO_H

#include <stddef.h>
#include "util/oid.h"
#include "util/strbuf.h"
#include "util/strvec.h"

/*
 * The bare work repository (workdir/repo.git): refs/feeds/<tree> fetched
 * tips, refs/heads/next, refs/tags/next-YYYYMMDD, refs/nextbot/good/<tree>,
 * refs/nextbot/journeys (the journeys' tips kept from gc: repo_keep_commits()).
 * Commits are typed ids (struct nb_oid); no libgit2 type leaks out of merge/: the
 * libgit2 handle is in merge/git/repohandle_int.h.
 */
struct repo;
struct strvec;

/*
 * The object stores the repository at `gitdir` borrows from: its
 * objects/info/alternates (a repository made with `git clone --reference`, a
 * shared mirror), absolute, in order, at most `max`.  None when it has no such
 * file.  Their own alternates are not followed.
 */
void repo_alternates(struct strvec *out, const char *gitdir, size_t max);

/*
 * Opens the bare repository at `path`, creating it (and its parents) if missing.
 * Removes stale lock files left by a killed run (index.lock, HEAD.lock,
 * packed-refs.lock, config.lock, *.lock under refs/): the caller must hold the run lock.
 * Returns 0 with *out set (free with repo_free()), or NB_ERROR (recorded:
 * damaged repository, repository owned by another user, disk).
 */
int repo_open(struct repo **out, const char *path);
void repo_free(struct repo *repo);
/*
 * For readers that do not hold the run lock (`report`): opens an existing
 * repository, creating nothing and removing no lock.  NB_ENOTFOUND when it is not
 * there.
 */
int repo_open_readonly(struct repo **out, const char *path);
/*
 * A handle for walks over history that exist already (reachability of fetched
 * commits): it reads the commit-graph, so it must never write an object nor look
 * up one written since it was opened (libgit2 1.5.1 maps the graph again at each
 * refresh of its object database and never unmaps the old mapping).
 */
int repo_open_walker(struct repo **out, const char *path);

/*
 * Every fetch leaves a pack per tree: at linux-next's scale 400 a night, and every
 * object lookup searched them one by one.  When objects/pack holds at least
 * REPO_PACKS_FOR_MIDX small packs (index up to 8 MiB) not all covered by it, this
 * writes a multi-pack-index over them (as `git multi-pack-index write` does; big
 * packs stay searched on their own, so the nightly rewrite stays cheap) and makes
 * the open repository use it.  A failure costs only speed: logged, 0 returned.
 */
#define REPO_PACKS_FOR_MIDX 16
int repo_index_packs(struct repo *repo);

/*
 * git (gc, fsck, rev-list, a maintainer's look at the work repository) and libgit2
 * readers walk history: a kernel's is a million commits.  This writes
 * objects/info/commit-graph over every commit a ref reaches (as `git commit-graph
 * write --reachable`: parents, dates and generation numbers without inflating
 * commits) when a ref names a commit the graph was not written from.  The tips it was
 * written from are in <gitdir>/nextbot-commit-graph-tips.  The handles repo_open()
 * and repo_open_readonly() give do not read it (libgit2 1.5.1 leaks a mapping of it
 * per object written; merge/git/commitgraph_int.h): the night's merge bases do not walk
 * history (merge/integrate/nightbase.c).  A failure costs only speed: logged, 0 returned.
 */
int repo_write_commit_graph(struct repo *repo);

/* The repository's path as given; borrowed, valid until repo_free(). */
const char *repo_gitdir(const struct repo *repo);

/*
 * Resolves a ref name ("refs/feeds/mm-next") or any revision to a commit id in
 * `out` (40 hex + NUL).  NB_ENOTFOUND (recorded) if it does not exist.
 */
int repo_ref_get(struct repo *repo, const char *refname, struct nb_oid *out);
/* Points `refname` at commit `hex` (created or forced); `hex` NULL deletes it. */
int repo_ref_set(struct repo *repo, const char *refname, const struct nb_oid *hex);

/*
 * Keeps the commits `ids` (and their history) from `git gc`: `refname` names one
 * commit (the empty tree, a fixed identity and date) whose parents they are, in
 * order, duplicates and null ids left out.  One object and one ref however many:
 * a ref per commit is a file created each, which for 400 trees cost a night more
 * than the rest of its bookkeeping.  Nothing is written when `refname` already names
 * that commit.  0, or NB_ERROR (recorded).
 */
int repo_keep_commits(struct repo *repo, const char *refname, const struct nb_oid *ids,
		      size_t nr);

/* refs/nextbot/good/<tree>: the tree's last good tip.  NB_ENOTFOUND when none. */
int repo_good_get(struct repo *repo, const char *tree, struct nb_oid *out);
int repo_good_set(struct repo *repo, const char *tree, const struct nb_oid *hex);

/* The subject (first line) of a commit, malloc'd (caller frees); "" if unknown. */
char *repo_commit_subject(struct repo *repo, const struct nb_oid *commit);

/*
 * Appends at most `max` bytes of the file `path` of the commit `refname` names (a
 * ref or a hex id; a tag is peeled) to `out`.  NB_ENOTFOUND (recorded) when there is
 * no such commit or file.
 */
int repo_read_path(struct strbuf *out, struct repo *repo, const char *refname,
		    const char *path, size_t max);

/* Process-wide start and stop of the git library behind merge/ (only bot/ calls these). */
/*
 * Initialises libgit2 (reference counted: calls may nest; each init needs one
 * shutdown).  Returns 0 or NB_ERROR (recorded).  Call before any merge/ function.
 */
int merge_global_init(void);
void merge_global_shutdown(void);

/* libgit2's last error as "message" (never NULL; "unknown error" if none). */
const char *merge_git_error(void);

/*
 * Repacking the work repository (`nextbot gc`): in-memory merges and
 * probes write loose objects every night.  With git installed this runs
 * `git gc --prune=now --quiet` (through util/runcmd.h); without it, libgit2's pack
 * builder packs every object reachable from any ref into one new pack, then removes
 * the older packs and every loose object (as --prune=now would).  Either way the
 * commit-graph is then written again over what the refs reach (or removed when it
 * cannot be), so it never names a pruned commit.  The caller holds
 * the run lock: nothing else may write the repository meanwhile.
 */
struct gc_result {
	const char *how;        /* "git gc --prune=now" or "libgit2 pack builder" (static) */
	size_t loose_before, loose_after;   /* loose objects */
	size_t packs_after;     /* pack files */
};

/* 1 if a `git` executable is on PATH. */
int gc_have_git(void);

/* Loose objects under `repo_path` (bare: repo_path/objects/xx/…). */
size_t gc_count_loose(const char *repo_path);

/*
 * Repacks the bare repository at `repo_path`: with git when gc_have_git() and not
 * `force_libgit2`, else (or when git gc fails) with libgit2.  Returns 0 with *out
 * filled, or NB_ERROR (recorded; nothing is removed when packing failed).
 */
int gc_repack(struct gc_result *out, const char *repo_path, int force_libgit2);

/*
 * Deletes the night tags refs/tags/next-YYYYMMDD of the bare repository at
 * `repo_path` whose date is before `before` ("YYYY-MM-DD"); *removed gets how
 * many.  Other tags are left alone.  Returns 0 or NB_ERROR.
 */
int gc_drop_night_tags(const char *repo_path, const char *before, size_t *removed);

/*
 * Finding patches in the work repository by what a maintainer knows of them:
 * commit id (prefix), patch-id (prefix) or Message-ID; and listing a tree's new
 * patches for the night's commit checks.  Hex strings only: no libgit2 types.
 */
struct repo;

/* One non-merge commit of a tree; every string owned, released by lookup_patch_release(). */
struct lookup_patch {
	char *tree;
	struct nb_oid commit;
	struct nb_patchid patch_id;  /* none for a merge, a root, a binary change */
	char *message_id;       /* NULL when none */
	char *subject;
	char *author_name, *author_email;
	int has_author_signoff;
	long long author_time;  /* seconds since the epoch */
	char *link;             /* URL of the Link: trailer naming message_id; NULL */
	char *body;             /* the message after its subject: valid UTF-8, LF line
				   ends, its trailers in it (trailer_*() below read them) */
};

struct lookup_patches {
	struct lookup_patch *items;
	size_t nr, alloc;
};
#define LOOKUP_PATCHES_INIT { NULL, 0, 0 }

/*
 * Appends the non-merge commits reachable from `tip` and not from `upto` (NULL:
 * all), oldest first, as patches of `tree`.  At most `max` (0: 100000).
 */
int lookup_new_patches(struct lookup_patches *out, struct repo *repo, const char *tree,
		       const char *tip, const char *upto, size_t max);

/*
 * The non-merge commits reachable from `tip` and not from `upto` (NULL or empty: all),
 * oldest first, at most `max` (0: 100000): the walk alone, no message or diff read.
 * *out (*nr entries) is malloc'd; the caller frees it.  0, or NB_ERROR (recorded,
 * naming `what`).
 */
int lookup_commit_ids(struct nb_oid **out, size_t *nr, struct repo *repo, const char *what,
		      const struct nb_oid *tip, const struct nb_oid *upto, size_t max);

/*
 * Finds the one patch in `pool` that `id` names: a commit or patch-id prefix of
 * at least 4 hex digits, or a Message-ID (with or without <>).  Returns its index,
 * or -1 (none) / -2 (ambiguous) with the error recorded.
 */
long lookup_patch_find(const struct lookup_patches *pool, const char *id);

/* Reads one commit as a patch of `tree` into `out` (release it after). */
int lookup_commit(struct lookup_patch *out, struct repo *repo, const char *tree,
		  const struct nb_oid *commit);
/*
 * The same without its patch-id (patch_id none), which is most of the cost of reading
 * a commit: for those who can wait for it, and then ask lookup_patch_id().
 */
int lookup_commit_meta(struct lookup_patch *out, struct repo *repo, const char *tree,
		       const struct nb_oid *commit);
/* The patch-id of `commit` (none for a merge, a root or a binary change); NB_ENOTFOUND. */
int lookup_patch_id(struct nb_patchid *out, struct repo *repo, const struct nb_oid *commit);

/*
 * 1 when `ancestor` is `commit` or reachable from it, 0 when not, negative (recorded)
 * when either is no commit of the repository.
 */
int lookup_contains(struct repo *repo, const struct nb_oid *commit,
		    const struct nb_oid *ancestor);

/*
 * 1 when `ancestor` is one of commits[0..n) or reachable from one of them, 0 when
 * not (n == 0 too), negative (recorded) on a bad id.  One walk for all of them.
 */
int lookup_contains_any(struct repo *repo, const struct nb_oid *commits, size_t n,
			const struct nb_oid *ancestor);

void lookup_patch_release(struct lookup_patch *p);
void lookup_patches_release(struct lookup_patches *list);

/*
 * Who did what, from history: the files of a commit's tree, and the commits of a
 * window of history with their people (author and trailers) and the paths they
 * changed.  For the people room's audit of MAINTAINERS (bot/people/).  No libgit2
 * type; commits are typed ids.
 */
struct repo;

/*
 * Appends every file (blobs, links, submodules: not directories) of the tree of
 * the commit `rev` names (a ref or hex id) to `out`, in git's order.  NB_ENOTFOUND
 * (recorded) when there is no such commit.
 */
int activity_tree_files(struct strvec *out, struct repo *repo, const char *rev);

/*
 * Appends the files `commit` changed against its first parent (all of its files
 * for a root commit) to `out`.  NB_ENOTFOUND (recorded) for an unknown commit.
 */
int activity_commit_paths(struct strvec *out, struct repo *repo, const struct nb_oid *commit);

/*
 * Appends the changed lines of `commit`'s patch against its first parent (the empty
 * tree for a root commit) to `out`, each with its '+' or '-' and without its end of
 * line, as `git diff-tree -p` shows them (no renames; file headers and context left
 * out).  Binary files, and files over ACTIVITY_LINES_MAX_BLOB, give no lines; past
 * ACTIVITY_LINES_MAX_BYTES or ACTIVITY_LINES_MAX lines the rest of a huge patch is
 * not read (what routes by keyword is then the patch's start).  NB_ENOTFOUND
 * (recorded) for an unknown commit.
 */
#define ACTIVITY_LINES_MAX_BLOB ((size_t)4 << 20)
#define ACTIVITY_LINES_MAX_BYTES ((size_t)1 << 20)
#define ACTIVITY_LINES_MAX 20000
int activity_commit_lines(struct strvec *out, struct repo *repo, const struct nb_oid *commit);

/* The committer date of the commit `rev` names, seconds since the epoch, into *out. */
int activity_commit_time(long long *out, struct repo *repo, const char *rev);

/* Appends the raw message of `commit` to `out` (at most `max` bytes). */
int activity_commit_message(struct strbuf *out, struct repo *repo, const struct nb_oid *commit,
			    size_t max);

/* How a person appears on a commit. */
enum activity_how {
	ACTIVITY_AUTHOR = 0,
	ACTIVITY_SIGNED_OFF, /* Signed-off-by: */
	ACTIVITY_REVIEWED,   /* Reviewed-by: */
	ACTIVITY_ACKED,	     /* Acked-by: */
	ACTIVITY_TESTED,     /* Tested-by: */
};

struct activity_person {
	enum activity_how how;
	const char *name;  /* NULL when the trailer has none */
	const char *email; /* as written (the part in <>, or the bare value) */
};

/* One commit as the callback sees it; everything borrowed for the call. */
struct activity_commit {
	struct nb_oid id;
	long long when;	/* committer date, seconds since the epoch */
	const struct activity_person *people; /* the author first, then the trailers */
	size_t people_nr;
	const char *const *paths; /* the files it changed against its parent */
	size_t paths_nr;
};

/*
 * Calls fn(ctx, c) for every commit reachable from `rev` whose committer date is
 * `since` or later, newest first (the walk stops at the first older one, as
 * `git log --since` does); merges are passed over, as `git log --no-merges`.  The
 * walk reads the repository's commit-graph (a handle of its own, opened on
 * repo's path) and inflates only the commits inside the window.  A callback that
 * returns non-zero stops the walk and its value is returned; else 0, or NB_ERROR
 * (recorded).
 */
int activity_walk(struct repo *repo, const char *rev, long long since,
		  int (*fn)(void *ctx, const struct activity_commit *c), void *ctx);

/*
 * merge/'s face for the people a commit message names in its trailers, and the one
 * definition of "reviewed" that the review gate (bot/journey/) and the review queue
 * (bot/people/) share.  Pure text: no libgit2 type.
 */
/* One "Key: Name <address>" trailer. */
struct trailer_person {
	char *key;   /* as written: "Reviewed-by", "acked-by", … */
	char *name;  /* one line, valid UTF-8, no control characters; may be "" */
	char *email; /* the part in <…>, or the whole value; one line; may be "" */
};

struct trailer_people {
	struct trailer_person *v;
	size_t nr, alloc;
};
#define TRAILER_PEOPLE_INIT { NULL, 0, 0 }

/*
 * Appends to `out` the trailers of `message` (a whole commit message, any line
 * ends, any bytes) whose key is one of keys[0..keys_nr) (ASCII case ignored; all
 * keys when keys_nr is 0), in the order written.  The trailers are those of the
 * message's last paragraph (after its subject), as `git interpret-trailers --parse`
 * reads them: "Key: value" lines, a line starting with white space continuing the
 * one before.  Every string is owned by `out`; free with trailer_people_release().
 */
void trailer_people_parse(struct trailer_people *out, const char *message,
			  const char *const *keys, size_t keys_nr);
void trailer_people_release(struct trailer_people *people);

/*
 * The Message-ID `message` (a whole commit message) names in its trailers (a
 * lore.kernel.org or patch.msgid.link Link:, a Message-ID:; the last one wins),
 * without angle brackets, malloc'd (caller frees); NULL when it names none.
 */
char *trailer_message_id(const char *message);

/*
 * An address map such as a tree's .mailmap, read by its owner (bot/people/).
 * `canonical` returns the address that `name <email>` stands for, or NULL when
 * the map says nothing of it; the string lives as long as the map.
 */
struct trailer_mailmap {
	const char *(*canonical)(void *ctx, const char *name, const char *email);
	void *ctx;
};

/*
 * The one definition of "reviewed": 1 when `message` has a trailer whose key is one
 * of require[0..require_nr) (ASCII case ignored; e.g. "Reviewed-by", "Acked-by")
 * by someone other than the patch's author; 0 otherwise (also when require_nr is 0).
 * "Other" compares addresses ignoring ASCII case and a "+tag" of the local part
 * (user+tag@host is user@host), each first mapped through `mailmap` when one is
 * given (NULL: none); a trailer in the author's own name (case and blanks ignored)
 * is the author's too, whatever its address; a trailer without an address is no
 * review.  `author_name` may be NULL (then names are not compared).  When
 * `out_index` is not NULL and the answer is 1, it gets the index in
 * trailer_people_parse(…, require, require_nr)'s list of the first review that counts.
 */
int trailer_reviewed(const char *message, const char *author_name, const char *author_email,
		     const char *const *require, size_t require_nr,
		     const struct trailer_mailmap *mailmap, size_t *out_index);

/* Is trailer `t` a review of the author by someone else?  As trailer_reviewed(). */
int trailer_person_is_other(const struct trailer_person *t, const char *author_name,
			    const char *author_email, const struct trailer_mailmap *mailmap);

/* The trailer keys nextbot knows; a trailer's `key` text is read once into one. */
enum trailer_kind {
	TRAILER_OTHER, /* a key nextbot gives no meaning */
	TRAILER_SIGNED_OFF,
	TRAILER_REVIEWED,
	TRAILER_ACKED,
	TRAILER_TESTED,
	TRAILER_CO_DEVELOPED,
};

/* "Reviewed-by" etc. as commits write it (no colon); NULL for TRAILER_OTHER. */
const char *trailer_kind_name(enum trailer_kind kind);
/* The kind of a trailer key as written (ASCII case ignored); TRAILER_OTHER else. */
enum trailer_kind trailer_kind_parse(const char *key);

/*
 * Two versions of a series compared as `git range-diff` compares them: each commit
 * as a text (its author, message and diff, in range-diff's layout), exact matches
 * first, then the pairing of least cost, where pairing two commits costs the size
 * of the diff between their diffs and leaving one unpaired costs its own size times
 * the creation factor (60 %).  And the interdiff of two versions of one patch.
 * Typed ids only: no libgit2 type.
 */
struct repo;

#define RANGEDIFF_CREATION_FACTOR 60 /* git's default (--creation-factor) */

struct rangediff_commit {
	struct nb_oid id;
	char *subject;   /* one line, valid UTF-8 */
	char *text;      /* range-diff's text of it: " ## Metadata ##", message, diff */
	size_t diff_at;  /* where the diff part of `text` starts */
	int size;        /* lines of the diff part */
	int pair;        /* index in the other range, or -1 */
};

struct rangediff {
	struct rangediff_commit *old, *new; /* each range oldest first */
	size_t old_nr, new_nr;
};
#define RANGEDIFF_INIT { NULL, NULL, 0, 0 }

/* The two ranges a range-diff compares: old_base..old_tip and new_base..new_tip. */
struct rangediff_ranges {
	const struct nb_oid *old_base, *old_tip;
	const struct nb_oid *new_base, *new_tip;
};

/*
 * Compares the two ranges (the non-merge commits each tip reaches and its base does
 * not; a NULL base: all of them), at most `max` commits a range (0: 200; a longer
 * range is NB_EINVALID, recorded: its cost grows with the square).
 * `creation_factor` in per cent (RANGEDIFF_CREATION_FACTOR).  Fills `out`
 * (RANGEDIFF_INIT; release with rangediff_release()).  Returns 0 or NB_ERROR.
 */
int rangediff_compute(struct rangediff *out, struct repo *repo,
		      const struct rangediff_ranges *ranges, int creation_factor, size_t max);
void rangediff_release(struct rangediff *rd);

/* The same over two ranges of one commit each: old_commit^..old_commit, new_commit^..new_commit. */
int rangediff_compute_pair(struct rangediff *out, struct repo *repo,
			   const struct nb_oid *old_commit, const struct nb_oid *new_commit,
			   int creation_factor);

/*
 * Appends the pair header as git range-diff prints it, "1:  1234567 ! 1:  89abcde
 * subject" ('=' same text, '!' changed, '<' only old, '>' only new; old_i or new_j
 * -1 for none), then for a changed pair the diff of the two texts, each line
 * indented by four, its hunks headed "@@ <section>" as range-diff does.
 */
void rangediff_pair_show(struct strbuf *out, const struct rangediff *rd, int old_i, int new_j);

/*
 * The interdiff of two versions of one patch: `git diff old new` as a patch, when
 * the two commits' parents have the same tree (the same base), appended to `out`.
 * NB_ECONFLICT (nothing appended, nothing recorded) when the bases differ;
 * NB_ERROR (recorded) when a commit cannot be read.
 */
int rangediff_interdiff(struct strbuf *out, struct repo *repo, const struct nb_oid *old_commit,
			const struct nb_oid *new_commit);

#endif
