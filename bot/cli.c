/* Global options and the table of commands. */
#include <stdio.h>
#include <string.h>

#include "bot/cli.h"
#include "util/banned.h"

int cli_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--version")) {
		printf("nextbot %s\n", NEXTBOT_VERSION);
		return EXIT_DONE;
	}
	fprintf(stderr, "nextbot: not yet implemented\n");
	return EXIT_FAILED;
}
