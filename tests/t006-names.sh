#!/bin/sh
# The name gates of `make style` (scripts/check-names): each one passes on a tree
# that keeps its rule and fails, naming the place, on one planted violation.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GATE="$ROOT/scripts/check-names"

# plant FILE: writes stdin into the small tree $T
plant() { mkdir -p "$T/$(dirname "$1")" && cat > "$T/$1"; }
fresh() { T=$TMP/tree$1; mkdir -p "$T"; }

expect_exit 0 "this checkout keeps the gates make style runs" "$GATE"
check "... and says so" grep -q "^names: ok" "$TMP/out"

# --- struct: a file-local struct named as a header's
fresh 1
plant bot/night/night.h <<'EOF'
struct night {
	int nr;
};
EOF
plant merge/search.c <<'EOF'
struct search {
	int nr;
};
EOF
expect_exit 0 "a file-local struct of its own name passes" "$GATE" --gate struct "$T"
plant merge/culprit.c <<'EOF'
struct night {
	int probes;
};
EOF
expect_exit 1 "a file-local struct named as a public one fails" "$GATE" --gate struct "$T"
check "... naming the file, the line and the header" \
	grep -q "^struct: merge/culprit.c:1: file-local struct night has the name of bot/night/night.h's" \
	"$TMP/out"

# --- static: a static function named as another file's public one
fresh 2
plant bot/state/state.c <<'EOF'
void state_release(int *s)
{
	*s = 0;
}
EOF
plant merge/bisect.c <<'EOF'
static void round_release(int *s)
{
	*s = 0;
}
EOF
expect_exit 0 "a static of its own name passes" "$GATE" --gate static "$T"
plant merge/bisect.c <<'EOF'
static void state_release(int *s)
{
	*s = 0;
}
EOF
expect_exit 1 "a static named as another file's function fails" "$GATE" --gate static "$T"
check "... naming the static and the other file" \
	grep -q "^static: merge/bisect.c:1: static state_release() has the name of bot/state/state.c's" \
	"$TMP/out"

# --- params: at most 7 parameters (a function pointer's own count apart)
fresh 3
plant util/p.c <<'EOF'
int seven(int a, int b, int c, int d, int e, int f, void (*g)(int, int, int))
{
	return a + b + c + d + e + f + !!g;
}
EOF
expect_exit 0 "seven parameters pass" "$GATE" --gate params "$T"
plant util/q.c <<'EOF'
static int eight(int a, int b, int c, int d,
		 int e, int f, int g, int h)
{
	return a + b + c + d + e + f + g + h;
}
EOF
expect_exit 1 "eight parameters fail" "$GATE" --gate params "$T"
check "... naming the function and its count" \
	grep -q "^params: util/q.c:1: eight() takes 8 parameters (at most 7)" "$TMP/out"
done_testing
