/* Next/Trees, Next/SHA1s and localversion-next in linux-next's exact formats. */
#include <string.h>

#include "merge/integrate/integrate.h"
#include "util/banned.h"

void nextfiles_trees(struct strbuf *out, const struct nextfiles_tree *trees, size_t n)
{
	size_t i;

	strbuf_addstr(out, "Trees included into this release:\n\n");
	strbuf_addstr(out, "Name\tType\tURL\n----\t----\t---\n");
	for (i = 0; i < n; i++)
		strbuf_addf(out, "%s\tgit\t%s#%s\n", trees[i].name, trees[i].url,
			    trees[i].branch);
}

void nextfiles_sha1s(struct strbuf *out, const struct nextfiles_tree *trees, size_t n)
{
	size_t i;

	strbuf_addstr(out, "Name\tSHA1\n----\t----\n");
	for (i = 0; i < n; i++)
		strbuf_addf(out, "%s\t%s\n", trees[i].name, trees[i].sha1);
}

void nextfiles_compact_date(char out[9], const char *date)
{
	size_t i, j = 0;

	for (i = 0; date[i] && j < 8; i++)
		if (date[i] >= '0' && date[i] <= '9')
			out[j++] = date[i];
	out[j] = '\0';
}

void nextfiles_localversion(struct strbuf *out, const char *date)
{
	char compact[9];

	nextfiles_compact_date(compact, date);
	strbuf_addf(out, "-next-%s\n", compact);
}
