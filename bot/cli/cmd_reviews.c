/* `nextbot reviews`: bot/people/'s review queue, its ages from bot/journey/'s store. */
#include "bot/cli/cli_int.h"
#include "bot/journey/journey.h"
#include "bot/people/people.h"
#include "util/banned.h"

int cmd_reviews(const struct cli_ctx *ctx, int argc, char **argv)
{
	return people_cmd_reviews(ctx, argc, argv, journey_people_open, journey_people_close);
}
