/* A merge conflict's kind read back from its text (declared in integrate.h). */
#include <string.h>

#include "merge/integrate/integrate.h"
#include "util/banned.h"

enum conflict_kind conflict_kind_parse(const char *kind)
{
	static const struct {
		const char *text;
		enum conflict_kind kind;
	} kinds[] = {
		{ "content", CONFLICT_CONTENT },
		{ "add/add", CONFLICT_ADD_ADD },
		{ "modify/delete", CONFLICT_MODIFY_DELETE },
		{ "rename/delete", CONFLICT_RENAME_DELETE },
		{ "rename/rename", CONFLICT_RENAME_RENAME },
	};
	size_t i;

	for (i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i].text))
			return kinds[i].kind;
	return CONFLICT_OTHER;
}
