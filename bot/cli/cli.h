/* Command-line dispatch; the only place that decides the process's exit code. */
#ifndef BOT_CLI_H
#define BOT_CLI_H

int cli_main(int argc, char **argv);

#endif
