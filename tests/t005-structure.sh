#!/bin/sh
# The structure gates of `make style` (scripts/check-structure): each one passes on
# a tree that keeps its rule and fails, naming the place, on one planted violation.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GATE="$ROOT/scripts/check-structure"

# plant FILE: writes stdin into the small tree $T
plant() { mkdir -p "$T/$(dirname "$1")" && cat > "$T/$1"; }
fresh() { T=$TMP/tree$1; mkdir -p "$T"; }

expect_exit 0 "this checkout keeps the gates make style runs" "$GATE"
check "... and says so" grep -q "^structure: ok" "$TMP/out"

# --- circle: two sources that call each other, two headers that include each other
fresh 1
plant util/a.c <<'EOF'
int plant_a(void)
{
	return 1;
}
EOF
plant util/b.c <<'EOF'
int plant_a(void);
int plant_b(void)
{
	return plant_a();
}
EOF
expect_exit 0 "a call one way is no circle" "$GATE" --gate circle "$T"
plant util/a.c <<'EOF'
int plant_b(void);
int plant_a(void)
{
	return plant_b();
}
EOF
expect_exit 1 "a call circle fails the circle gate" "$GATE" --gate circle "$T"
check "... naming both files and the calls" \
	grep -q "^circle: util/a util/b: util/a -> util/b (plant_b); util/b -> util/a (plant_a)" "$TMP/out"
fresh 2
printf '#include "util/y.h"\n' | plant util/x.h
printf '#include "util/x.h"\n' | plant util/y.h
expect_exit 1 "an include circle fails the circle gate" "$GATE" --gate circle "$T"
check "... naming the includes" grep -q "util/x.h -> util/y.h (#include util/y.h)" "$TMP/out"

# --- door: a bot/ file including a merge/ header it names nothing of
fresh 3
plant merge/door/door.h <<'EOF'
struct door_opts { int x; };
enum door_kind { DOOR_A, DOOR_B };
int door_open(const struct door_opts *o);
EOF
printf '#include "merge/door/door.h"\nint bot_x(void)\n{\n\treturn DOOR_B;\n}\n' | plant bot/x.c
expect_exit 0 "a bot/ file naming an enum constant of its door passes" "$GATE" --gate door "$T"
printf '#include "merge/door/door.h"\nint bot_x(void)\n{\n\treturn 2;\n}\n' | plant bot/sub/y.c
expect_exit 1 "a bot/ file (any depth) with an unused merge/ door fails" "$GATE" --gate door "$T"
check "... naming the file and the door" \
	grep -q "^door: bot/sub/y.c includes merge/door/door.h and names nothing it declares" "$TMP/out"
check "... and not the file that uses it" sh -c "! grep -q 'bot/x.c' '$TMP/out'"

# --- door: merge/ is rooms, a folder each, reached by its door alone
fresh 3r
printf 'struct door_opts { int x; };\nint door_open(const struct door_opts *o);\n' | plant merge/door/door.h
printf 'int door_inner(void);\n' | plant merge/door/inner_int.h
printf 'int floor_x(void);\n' | plant merge/git/floor_int.h
printf '#include "merge/door/door.h"\nint bot_x(void)\n{\n\treturn door_open(0);\n}\n' | plant bot/x.c
printf '#include "merge/door/inner_int.h"\n#include "merge/git/floor_int.h"\nint door_open(void)\n{\n\treturn door_inner() + floor_x();\n}\n' \
	| plant merge/door/door.c
printf '#include "merge/door/door.h"\n#include "merge/git/floor_int.h"\nint other_y(void)\n{\n\treturn door_open(0) + floor_x();\n}\n' \
	| plant merge/other/other.c
expect_exit 0 "rooms reached by their doors, the floor by merge/, pass" "$GATE" --gate door "$T"
printf '#include "merge/door/inner_int.h"\nint other_z(void)\n{\n\treturn door_inner();\n}\n' \
	| plant merge/other/z.c
printf '#include "merge/door/inner_int.h"\nint bot_y(void)\n{\n\treturn door_inner();\n}\n' | plant bot/y.c
printf '#include "merge/git/floor_int.h"\nint notify_x(void)\n{\n\treturn floor_x();\n}\n' | plant notify/x.c
printf 'int door_more(void);\n' | plant merge/door/more.h
printf 'int loose(void)\n{\n\treturn 0;\n}\n' | plant merge/loose.c
expect_exit 1 "a room's inside reached from another room fails the door gate" "$GATE" --gate door "$T"
check "... naming the includer, the header and the door" grep -q \
	"^door: merge/other/z.c includes merge/door/inner_int.h, inside merge/door/: include its door merge/door/door.h" \
	"$TMP/out"
check "... and bot/ reaching past a door" grep -q "^door: bot/y.c includes merge/door/inner_int.h, inside" "$TMP/out"
check "... and the floor reached from outside merge/ and feeds/" \
	grep -q "^door: notify/x.c includes merge/git/floor_int.h, of merge/git/, the floor" "$TMP/out"
check "... and a second public header in a room" \
	grep -q "^door: merge/door/more.h is a second public header of merge/door/" "$TMP/out"
check "... and a file in no room" grep -q "^door: merge/loose.c lies in no room" "$TMP/out"
check "... and not the files that keep the rule" sh -c "! grep -Eq 'bot/x.c|merge/door/door.c|other/other.c' '$TMP/out'"
# --- rooms: bot/'s folders form no loop, even where no file-level circle exists
fresh 7
printf 'int low_date(void);\n' | plant bot/low/low.h
plant bot/low/low.c <<'EOF'
#include "bot/low/low.h"
int low_date(void)
{
	return 1;
}
EOF
printf 'int top_run(void);\n' | plant bot/top/top.h
plant bot/top/top.c <<'EOF'
#include "bot/low/low.h"
#include "bot/top/top.h"
int top_run(void)
{
	return low_date();
}
EOF
plant bot/top/gc.c <<'EOF'
int top_gc(void)
{
	return 0;
}
EOF
expect_exit 0 "a room calling a lower one is no loop" "$GATE" --gate rooms "$T"
plant bot/low/prune.c <<'EOF'
int top_gc(void);
int low_prune(void)
{
	return top_gc();
}
EOF
expect_exit 0 "the circle gate sees no file-level circle in a loop of folders" \
	"$GATE" --gate circle "$T"
expect_exit 1 "a call back up from a lower room fails the rooms gate" "$GATE" --gate rooms "$T"
check "... naming both rooms and what ties them" grep -q "^rooms: a loop among bot/low bot/top: bot/low -> bot/top (bot/low/prune.c calls top_gc()); bot/top -> bot/low (bot/top/top.c #includes bot/low/low.h, bot/top/top.c calls low_date())" "$TMP/out"
rm "$T/bot/low/prune.c"
printf '#include "bot/top/top.h"\n' | plant bot/low/low_int.h
expect_exit 1 "an include back up fails the rooms gate" "$GATE" --gate rooms "$T"
check "... naming it" grep -q "bot/low -> bot/top (bot/low/low_int.h #includes bot/top/top.h)" "$TMP/out"
rm "$T/bot/low/low_int.h"
printf 'int low_more(void);\n' | plant bot/low/more.h
expect_exit 1 "a second public header in a room fails the rooms gate" "$GATE" --gate rooms "$T"
check "... naming the room and both" \
	grep -q "^rooms: bot/low/ has 2 public headers (bot/low/low.h, bot/low/more.h)" "$TMP/out"
check "... and no loop any more" sh -c "! grep -q 'a loop' '$TMP/out'"
rm "$T/bot/low/more.h"
printf 'int low_inner(void);\n' | plant bot/low/low_int.h
printf '#include "bot/low/low_int.h"\n' | plant bot/top/top_int.h
expect_exit 1 "another room's *_int.h fails the rooms gate" "$GATE" --gate rooms "$T"
check "... naming the include" grep -q \
	"^rooms: bot/top/top_int.h includes bot/low/low_int.h, inside bot/low/: reach it by its door" \
	"$TMP/out"

# --- text: a kind compared as text outside its _name()/_parse()
fresh 4
plant notify/kind.c <<'EOF'
#include <string.h>
enum plant_kind { PLANT_BUILD, PLANT_FLAKY };
const char *plant_kind_name(enum plant_kind k)
{
	return k == PLANT_FLAKY ? "flaky-one" : "build-one";
}
int plant_kind_parse(const char *s, enum plant_kind *k)
{
	*k = !strcmp(s, "flaky-one") ? PLANT_FLAKY : PLANT_BUILD;
	return 0;
}
EOF
expect_exit 0 "comparing inside _name()/_parse() passes" "$GATE" --gate text "$T"
plant notify/use.c <<'EOF'
#include <string.h>
static int is_flaky(const char *kind)
{
	return kind && !strncmp(kind,
				"flaky-one", 9);
}
static int is_mail(const char *channel)
{
	return !strcasecmp(channel, "mail");
}
EOF
expect_exit 1 "a kind compared as text elsewhere fails the text gate" "$GATE" --gate text "$T"
check "... the word a _name() spells" \
	grep -q '^text compare: notify/use.c:4: is_flaky() compares "flaky-one" as text' "$TMP/out"
check "... and a channel" \
	grep -q '^text compare: notify/use.c:9: is_mail() compares "mail" as text' "$TMP/out"
# --- ids: a door function takes a commit as struct nb_oid, never as hex text
fresh 5
plant merge/door.h <<'EOF'
struct nb_oid;
struct strbuf;
int door_merge(struct strbuf *out, const struct nb_oid *tip, const char *why);
EOF
plant merge/door_int.h <<'EOF'
int door_parse(const char *tip_hex);
EOF
expect_exit 0 "typed ids in a door (hex in an _int.h only) pass the ids gate" \
	"$GATE" --gate ids "$T"
plant merge/door.h <<'EOF'
struct strbuf;
int door_merge(struct strbuf *out, const char *tip_hex,
	       const char *why);
void door_show(char hex[41]);
EOF
expect_exit 1 "a door function taking hex text fails the ids gate" "$GATE" --gate ids "$T"
check "... naming it" \
	grep -q '^ids: merge/door.h:2: door_merge() takes a commit as hex text (tip_hex)' "$TMP/out"
check "... and a hex array" grep -q '^ids: merge/door.h:4: door_show() .*(hex)' "$TMP/out"
# --- hashsz: the hash length is one constant, never a literal 40 or 41
fresh 6
plant util/h.c <<'EOF'
#define LINES_MAX 40
/* 40 hex digits in a comment, "41" in a string */
static char id[NB_OID_HEXSZ + 1];
int h_lines(void)
{
	return LINES_MAX + (int)sizeof(id);
}
EOF
expect_exit 0 "the constant, a comment, a string and a plain #define pass the hashsz gate" \
	"$GATE" --gate hashsz "$T"
plant util/h.c <<'EOF'
#define HEX_LEN 40
static char id[41];
int h_ok(const char *s)
{
	return s[40] == '\0';
}
EOF
expect_exit 1 "literal hash lengths fail the hashsz gate" "$GATE" --gate hashsz "$T"
check "... naming a #define of a hash's length" grep -q '^hashsz: util/h.c:1: ' "$TMP/out"
check "... an array of one" grep -q '^hashsz: util/h.c:2: .*id\[41\]' "$TMP/out"
check "... and an index" grep -q '^hashsz: util/h.c:5: ' "$TMP/out"
# --- decide in one place: the breakage handling (night_check.c) returns a decision;
# only bot/night/night.c reverts, falls back, drops, re-merges, rewinds or sets a flag's action
acts=$(cd "$ROOT" && grep -rlE \
	"integ_night_(revert|left_out|truncate|merge_tree|apply_fixes|restore)\(|->action = FLAG_" \
	bot notify feeds | sort -u | tr '\n' ' ')
check "only bot/night/night.c carries out a breakage's actions (callers: $acts)" \
	test "$acts" = "bot/night/night.c "
check "night_check.c decides (night_handle_breakage fills a struct night_decision)" \
	grep -q "^int night_handle_breakage(struct night \*n, struct night_failure \*fail,$" \
	"$ROOT/bot/night/night_check.c"
done_testing
