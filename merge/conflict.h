/*
 * A merge conflict's kind.  The merge (ort.c, treemerge.c) decides it and carries
 * it as its text, as merge.log and the notices write it ("content", "add/add",
 * "modify/delete", "rename/delete", "rename/rename"); conflict_kind_parse() is
 * where that text is read back, so that nothing else compares it.
 */
#ifndef MERGE_CONFLICT_H
#define MERGE_CONFLICT_H

enum conflict_kind {
	CONFLICT_OTHER,          /* a kind this reader does not know */
	CONFLICT_CONTENT,        /* both sides changed the same lines */
	CONFLICT_ADD_ADD,        /* both sides added the path */
	CONFLICT_MODIFY_DELETE,
	CONFLICT_RENAME_DELETE,
	CONFLICT_RENAME_RENAME,
};

enum conflict_kind conflict_kind_parse(const char *kind);

#endif
