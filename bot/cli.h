/* Command-line dispatch; the only place that decides the process's exit code. */
#ifndef BOT_CLI_H
#define BOT_CLI_H

/* Exit codes: 0 done, 1 the bot failed, 2 usage or config error, 3 `bisect` found only skips. */
enum cli_exit {
	EXIT_DONE = 0,     /* the command did its job */
	EXIT_FAILED = 1,   /* the bot itself failed */
	EXIT_USAGE = 2,    /* usage or config error */
	EXIT_SKIPPED = 3,  /* bisect: only skipped commits remain */
	EXIT_DATAERR = 65, /* mail-in: not a mail message (sysexits EX_DATAERR) */
	EXIT_TEMPFAIL = 75, /* mail-in: try again later (EX_TEMPFAIL): lock held, disk */
};

int cli_main(int argc, char **argv);

#endif
