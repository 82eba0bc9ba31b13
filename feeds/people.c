/* The simulated world's people: submitters (some with non-ASCII names), maintainers. */
#include <stdio.h>

#include "feeds/sim.h"
#include "util/banned.h"

const struct sim_person sim_submitters[] = {
	{ "Jörg Rödel", "joerg.roedel@example.org" },
	{ "Zoë Ångström", "zoe.angstrom@example.net" },
	{ "李雷", "li.lei@example.cn" },
	{ "Alice Hartmann", "alice@example.org" },
	{ "Bogdan Popescu", "bogdan.popescu@example.ro" },
	{ "Chiara Rossi", "chiara.rossi@example.it" },
	{ "Søren Ødegaard", "soren@example.dk" },
	{ "Dmitri Volkov", "dvolkov@example.com" },
	{ "Emeka Obi", "emeka.obi@example.org" },
	{ "François Lefèvre", "francois.lefevre@example.fr" },
	{ "Hanna Nowak", "hanna.nowak@example.pl" },
	{ "Kenji Sato", "kenji.sato@example.jp" },
	{ "Lucía Fernández", "lucia@example.es" },
	{ "Mehmet Yılmaz", "mehmet.yilmaz@example.com.tr" },
	{ "Priya Raman", "priya.raman@example.in" },
	{ "Tomás Ó Briain", "tomas.obriain@example.ie" },
};
const size_t sim_submitters_nr = sizeof(sim_submitters) / sizeof(sim_submitters[0]);

static const struct sim_person named_maintainers[] = {
	{ "Linnea Thorvald", "linnea@kernel.example.org" },  /* mainline */
	{ "Andrea Morten", "andrea@linux-mm.example.org" },  /* mm */
	{ "Jakob Kiczek", "jakob@netdev.example.org" },      /* net-next */
	{ "Viktor Lindqvist", "viktor@vfs.example.org" },    /* vfs */
	{ "Petra Zijlstra-Holm", "petra@sched.example.org" }, /* sched */
};

static const char *const first_names[] = { "Ada", "Bruno", "Carmen", "Dario", "Elin", "Farid",
					   "Greta", "Hugo", "Ines", "Jonas", "Kaja", "Leo" };
static const char *const last_names[] = { "Berg", "Costa", "Dahl", "Eriksen", "Fischer",
					  "Gruber", "Horvat", "Ivanova", "Jansen", "Kowalski" };

struct sim_person sim_maintainer(int index)
{
	static char names[2][64], mails[2][64];
	static int turn;
	size_t nf = sizeof(first_names) / sizeof(first_names[0]);
	size_t nl = sizeof(last_names) / sizeof(last_names[0]);
	struct sim_person p;
	int i;

	if (index < (int)(sizeof(named_maintainers) / sizeof(named_maintainers[0])))
		return named_maintainers[index];
	turn ^= 1;
	i = index - 5;
	snprintf(names[turn], sizeof(names[turn]), "%s %s", first_names[i % nf],
		 last_names[(i / nf) % nl]);
	snprintf(mails[turn], sizeof(mails[turn]), "maint%d@drivers.example.org", i);
	p.name = names[turn];
	p.email = mails[turn];
	return p;
}
