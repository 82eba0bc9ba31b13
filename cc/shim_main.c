/* nextbot-cc: the compiler shim's program, small so that a compile does not pay nextbot's start. */
#include "cc/cc.h"
#include "util/banned.h"

int main(int argc, char **argv)
{
	return cc_shim_main(argc, argv);
}
