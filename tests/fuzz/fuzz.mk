# libFuzzer targets: `make fuzz` builds every tests/fuzz/fuzz_*.c against
# the library sources under clang -fsanitize=fuzzer,address,undefined in build-fuzz/
# and runs each for FUZZ_TIME seconds (default 60).  FUZZ=name runs only the targets
# whose name contains it.  New inputs go to build-fuzz/corpus/<target>/; crashes and
# property failures go to tests/fuzz/corpus/<target>/crash-* (or leak-*, timeout-*),
# where `make check` (tests/test_fuzz_replay.c) replays them until they are fixed.
#   make -f tests/fuzz/fuzz.mk fuzz-build    build only
#   make -f tests/fuzz/fuzz.mk fuzz-merge    fold new coverage into the seed corpora
# A summary of executions per target is written to build-fuzz/summary.txt.

FUZZ_TIME ?= 60
FUZZ ?=
FUZZ_CC ?= clang
PKG_CONFIG ?= pkg-config
FUZZ_BUILD := build-fuzz

LIBS_PC := libgit2 libcurl json-c yaml-0.1 libcrypto
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wshadow -Wformat=2 -Wno-format-nonliteral -Wstrict-prototypes -g -O1 -I. \
	-DNEXTBOT_VERSION='"fuzz"' -MMD -MP -pthread $(SAN_FLAGS) \
	$(shell $(PKG_CONFIG) --cflags $(LIBS_PC) 2>/dev/null)
FUZZ_LIBS := $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null) -pthread

LIB_SRC := $(sort $(wildcard util/*.c merge/*/*.c notify/*.c feeds/*.c cc/*.c bot/*/*.c))
LIB_SRC := $(filter-out bot/cli/main.c cc/shim_main.c,$(LIB_SRC))
# Library objects carry coverage instrumentation without libFuzzer's main.
LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)
TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
TARGET_BIN := $(TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
RUN_TARGETS := $(if $(FUZZ),$(foreach t,$(TARGETS),$(if $(findstring $(FUZZ),$(t)),$(t))),$(TARGETS))

ifneq ($(V),1)
Q := @
QCC = @echo "  CC      $<";
QLD = @echo "  LD      $@";
endif

fuzz-run: fuzz-build
	@FUZZ_TIME=$(FUZZ_TIME) FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run $(RUN_TARGETS)

fuzz-build: $(TARGET_BIN)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QCC)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(CFLAGS) -c -o $@ $<

$(FUZZ_BUILD)/tests/fuzz/fuzz_%.o: tests/fuzz/fuzz_%.c
	@mkdir -p $(dir $@)
	$(QCC)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(CFLAGS) -c -o $@ $<

# Objects, not an archive: weak placeholders (bot/cmd_stubs.c) must lose to the
# real definitions, as in the main Makefile.
$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/tests/fuzz/fuzz_%.o $(LIB_OBJ)
	$(QLD)$(FUZZ_CC) $(SAN_FLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

fuzz-merge: fuzz-build
	@for t in $(TARGETS); do \
		mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
		$(FUZZ_BUILD)/fuzz_$$t -merge=1 tests/fuzz/corpus/$$t $(FUZZ_BUILD)/corpus/$$t \
			2>&1 | grep -E '^MERGE-OUTER: [0-9]+ new files' | sed "s|^|$$t: |"; \
	done

.PHONY: fuzz-run fuzz-build fuzz-merge
.SECONDARY:

-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
