/*
 * The three-way tree merge of git's ort strategy, rewritten for nextbot so that its
 * result is git 2.39's `git merge-tree --write-tree` result: the same phases
 * (collect the paths that differ, find renames as diffcore-rename does, merge path
 * by path, write the trees) and the same decisions, orders included.
 * merge/git/ort.c does the merge, merge/git/ortrename.c the rename
 * detection; merge/git/treemerge.c builds virtual merge bases from them.
 * Internal to merge/.
 */
#ifndef MERGE_ORT_INT_H
#define MERGE_ORT_INT_H

#include <git2.h>

#include "merge/git/gitmap_int.h"

#define ORT_MAX_SCORE 60000
#define ORT_DEFAULT_RENAME_SCORE 30000
#define ORT_RENAME_LIMIT 7000

enum ort_dir_relevance { ORT_NOT_RELEVANT = 0, ORT_RELEVANT_FOR_ANCESTOR = 1,
			 ORT_RELEVANT_FOR_SELF = 2 };
enum ort_file_relevance { ORT_RELEVANT_NO_MORE = 0, ORT_RELEVANT_CONTENT = 1,
			  ORT_RELEVANT_LOCATION = 2 };

/* diffcore's filespec: one side of a pair. */
struct ort_spec {
	const char *path;
	git_oid oid;
	unsigned int mode;      /* 0: not valid (no file on this side) */
	int rename_used;
	/* similarity data, loaded on demand */
	int have_size, have_hash;
	size_t size;
	struct ort_span *spans; /* sorted by hash; NULL with have_hash: empty */
	size_t spans_nr;
};

/* diffcore's filepair. */
struct ort_pair {
	struct ort_spec *one, *two;
	char status;            /* 'A', 'D', 'R' once resolved */
	int score;              /* similarity; later the side of the rename */
	int renamed_pair;
};

struct ort_pairs {
	struct ort_pair **v;
	size_t nr, alloc;
};

/* What the rename detection of one side works with (merge-ort's rename_info). */
struct ort_rename_input {
	git_repository *repo;
	git_odb *odb;
	struct arena *arena;
	struct gitmap *relevant_sources;        /* path -> ort_file_relevance */
	struct gitmap *dirs_removed;            /* dir -> ort_dir_relevance */
	struct gitmap *dir_rename_count;        /* old dir -> (struct gitmap *: new dir -> n) */
	int needed_limit;                       /* out: the rename limit that would do */
	int failed;                             /* out: an object could not be read */
};

/*
 * diffcore_rename_extended() as merge-ort calls it: pairs `q` (adds and deletes of
 * one side, in traversal order) become renames where git finds them; `q` is
 * rewritten as git rewrites its queue (a rename replaces its add, its delete goes).
 * Statuses are not set here.
 */
void ort_rename_detect(struct ort_pairs *q, struct ort_rename_input *in);

/* A merge of three trees (merge-ort's merge_ort_nonrecursive_internal()). */
struct ort_options {
	const char *branch1, *branch2;  /* labels: "Temporary merge branch 1/2" inside */
	const char *ancestor;           /* the base's label (only diff3 style shows it) */
	int call_depth;                 /* 0: the real merge; > 0: building a base */
};

/* One conflicted path of the result, with its stages (mode 0: no such stage). */
struct ort_conflict {
	char *path;
	unsigned int modes[3];
	git_oid oids[3];
	const char *kind;       /* static: "content", "add/add", "modify/delete", … */
	int pathless;           /* not a conflicted file: where a conflict git lists no
				   file for was found (directory renames) */
};

struct ort_result {
	git_oid tree;           /* written, also when not clean (markers and all) */
	int clean;
	struct ort_conflict *conflicts; /* sorted by path */
	size_t conflicts_nr;
	int unsure;             /* a case nextbot does not model: treat as a conflict */
};
void ort_result_release(struct ort_result *r);

/* 0 with *out filled, or NB_ERROR (an object could not be read or written). */
int ort_merge_trees(struct ort_result *out, git_repository *repo, const git_oid *base,
		    const git_oid *side1, const git_oid *side2, const struct ort_options *opts);

#endif
