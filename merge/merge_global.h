/* Process-wide start and stop of the git library behind merge/ (only bot/ calls these). */
#ifndef MERGE_MERGE_GLOBAL_H
#define MERGE_MERGE_GLOBAL_H

/*
 * Initialises libgit2 (reference counted: calls may nest; each init needs one
 * shutdown).  Returns 0 or NB_ERROR (recorded).  Call before any merge/ function.
 */
int merge_global_init(void);
void merge_global_shutdown(void);

/* libgit2's last error as "message" (never NULL; "unknown error" if none). */
const char *merge_git_error(void);

#endif
