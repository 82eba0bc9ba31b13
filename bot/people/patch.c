/*
 * What routing reads of a patch: its files, changed lines and message (for K:), and
 * the maintainers: of the device-tree bindings it touches, as get_maintainer.pl adds
 * the addresses of a .yaml file a patch touches ("in file").
 */
#include <stdlib.h>
#include <string.h>

#include "bot/people/people.h"
#include "merge/repo/repo.h"
#include "notify/mime.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/banned.h"

#define BINDINGS_DIR "Documentation/devicetree/bindings/"
/* A binding larger than this is not read: bindings are a few KiB. */
#define BINDING_MAX_BYTES ((size_t)1 << 20)
/* A patch's maintainers: people past this many are left out. */
#define BINDINGS_MAX 64
/* A commit message read for K: at most this long. */
#define MESSAGE_MAX_BYTES ((size_t)256 << 10)

static int is_binding(const char *path)
{
	size_t n = strlen(path);

	return !strncmp(path, BINDINGS_DIR, strlen(BINDINGS_DIR)) && n > 5 &&
	       !strcmp(path + n - 5, ".yaml");
}

/* One "  - Name <addr>" value: its quotes gone, "addr" alone kept. */
static void binding_add(struct people_patch *pp, const char *path, const char *v, size_t n)
{
	char *value, *name = NULL, *email = NULL;
	size_t i;

	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
		n--;
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		v++;
		n -= 2;
	}
	value = xstrndup(v, n);
	if (pp->bindings_nr >= BINDINGS_MAX || mime_addr_parse(value, &name, &email) < 0) {
		nb_error_clear(); /* not an address: the script would not find one either */
		free(value);
		return;
	}
	free(value);
	for (i = 0; i < pp->bindings_nr; i++)
		if (!strcmp(pp->bindings[i].email, email) && !strcmp(pp->bindings[i].path, path))
			break;
	if (i < pp->bindings_nr) {
		free(name);
		free(email);
		return;
	}
	ALLOC_GROW_MIN(pp->bindings, pp->bindings_nr + 1, pp->bindings_alloc, 4);
	pp->bindings[pp->bindings_nr++] =
		(struct people_binding){ .path = xstrdup(path), .name = name, .email = email };
}

/*
 * The block list under a top-level "maintainers:" key ("maintainers:" then lines
 * "  - Name <addr>", until the next line at the first column).
 */
void people_patch_binding(struct people_patch *pp, const char *path, const char *yaml)
{
	const char *line = yaml;
	int in = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		size_t lead = strspn(line, " \t");

		if (!strncmp(line, "maintainers:", 12)) {
			in = 1;
		} else if (in && lead < n && line[lead] == '-' && lead > 0 &&
			   (line[lead + 1] == ' ' || line[lead + 1] == '\t')) {
			size_t at = lead + 1 + strspn(line + lead + 1, " \t");

			binding_add(pp, path, line + at, n - at);
		} else if (in && lead == 0 && n && line[0] != '#') {
			in = 0; /* the next key */
		}
		line = nl ? nl + 1 : NULL;
	}
}

/* The message's lines, as the script reads the lines before a patch's diff. */
static int read_message(struct people_patch *pp, struct repo *repo, const struct nb_oid *commit)
{
	struct strbuf msg = STRBUF_INIT;
	const char *line;
	int error = activity_commit_message(&msg, repo, commit, MESSAGE_MAX_BYTES);

	for (line = msg.buf; !error && *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		if (n)
			strvec_push_nodup(&pp->message, xstrndup(line, n));
		line += n + (nl != NULL);
	}
	strbuf_release(&msg);
	return error;
}

int people_patch_read(struct people_patch *pp, struct repo *repo, const struct nb_oid *commit)
{
	size_t first = pp->paths.nr, i;
	int error;

	if ((error = activity_commit_paths(&pp->paths, repo, commit)) < 0 ||
	    (error = activity_commit_lines(&pp->lines, repo, commit)) < 0 ||
	    (error = read_message(pp, repo, commit)) < 0)
		return error;
	for (i = first; i < pp->paths.nr; i++) {
		struct strbuf yaml = STRBUF_INIT;

		if (is_binding(pp->paths.v[i]) &&
		    repo_read_path(&yaml, repo, commit->hex, pp->paths.v[i],
				   BINDING_MAX_BYTES) == 0)
			people_patch_binding(pp, pp->paths.v[i], yaml.buf);
		else
			nb_error_clear(); /* deleted by the commit: nobody to add */
		strbuf_release(&yaml);
	}
	return 0;
}

void people_patch_release(struct people_patch *pp)
{
	size_t i;

	strvec_clear(&pp->paths);
	strvec_clear(&pp->lines);
	strvec_clear(&pp->message);
	for (i = 0; i < pp->bindings_nr; i++) {
		free(pp->bindings[i].path);
		free(pp->bindings[i].name);
		free(pp->bindings[i].email);
	}
	free(pp->bindings);
	*pp = (struct people_patch)PEOPLE_PATCH_INIT;
}
