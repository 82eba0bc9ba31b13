/* The nextbot command line: global options, then one command. */
#include <stdio.h>
#include <string.h>

#include "bot/cli/cli.h"
#include "util/banned.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
