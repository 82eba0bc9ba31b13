/* The operator's mail about the night's infrastructure: local paths stay, never to a list. */
#include "notify/draft.h"
#include "notify/notice.h"
#include "util/banned.h"

int notice_queue_operator_notes(const struct notice_settings *s,
				const struct notice_operator_notes *o)
{
	struct draft d = DRAFT_INIT;
	size_t i;
	int ret;

	if (!s->operator || !o->notes_nr)
		return 0;
	if ((ret = draft_check_settings(s)) < 0)
		return ret;
	d.kind = "operator";
	d.operator_only = 1;
	d.parts[0] = "operator";
	d.parts[1] = o->date;
	d.parts[2] = "infrastructure";
	draft_add_spec(&d, s->operator, 0);
	strbuf_addf(&d.subject, "[nextbot operator] %s: infrastructure",
		    draft_cl(&d, o->next_tag ? o->next_tag : o->date));
	draft_para(&d, "Tonight's run met problems of this host, not of any patch:");
	for (i = 0; i < o->notes_nr; i++)
		draft_para(&d, "- %s", draft_cl(&d, o->notes[i]));
	strbuf_addstr(&d.body, "-- \nnextbot\n");
	ret = draft_queue(s, &d);
	draft_release(&d);
	return ret;
}
