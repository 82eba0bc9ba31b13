# nextbot: nightly integration bot.  `make`, `make check`, `make unit`, `make demo`,
# `make install`.  Add to the user's CFLAGS, never replace them.  SAN=1 for
# ASan+UBSan, V=1 for commands.
#
# DEVELOPER=1 turns warnings into errors (and with clang adds -Wshadow
# -Wconditional-uninitialized).  It is on by default in a git checkout
# (development and CI, which runs in a clone) and off in an unpacked release, so a
# packager's newer compiler warns instead of failing; `make DEVELOPER=0` or
# `DEVELOPER=1` overrides either way.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/nextbot
CC ?= cc
PKG_CONFIG ?= pkg-config
VERSION := 0.1.0

ifeq ($(wildcard .git),)
DEVELOPER ?= 0
else
DEVELOPER ?= 1
endif

LIBS_PC := libgit2 libcurl json-c yaml-0.1 libcrypto libpcre2-8
NB_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
	-Wshadow -Wformat=2 -Wstrict-prototypes -g -O2 -I. \
	-DNEXTBOT_VERSION='"$(VERSION)"' -MMD -MP -pthread
ifeq ($(DEVELOPER),1)
NB_CFLAGS += -Werror
# clang sees a variable that only some paths set, and a name that hides another
ifneq ($(shell $(CC) --version 2>/dev/null | grep -c clang),0)
NB_CFLAGS += -Wshadow -Wconditional-uninitialized
endif
endif
# A library pkg-config does not know is named, not left to a compile error.
MISSING_PC := $(strip $(foreach p,$(LIBS_PC),$(if $(shell $(PKG_CONFIG) --exists $(p) && echo y),,$(p))))
MISSING_TEST_PC := $(strip $(if $(shell $(PKG_CONFIG) --exists cmocka && echo y),,cmocka))
NB_CFLAGS += $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) 2>/dev/null)
# libcurl is compiled against but not linked: notify/curlload.c opens it at the first
# request, so the processes that send nothing do not load its ~30 libraries.
NB_LIBS := $(shell $(PKG_CONFIG) --libs $(filter-out libcurl,$(LIBS_PC)) 2>/dev/null) -ldl -pthread
TEST_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
TEST_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

ifeq ($(SAN),1)
NB_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O1
NB_LDFLAGS += -fsanitize=address,undefined
BUILD := build-san
else
BUILD := build
endif

ifneq ($(V),1)
Q := @
QCC = @echo "  CC      $<";
QLD = @echo "  LD      $@";
endif

LIB_SRC := $(sort $(wildcard util/*.c merge/*/*.c notify/*.c feeds/*.c cc/*.c bot/*/*.c))
LIB_SRC := $(filter-out bot/cli/main.c cc/shim_main.c,$(LIB_SRC))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(filter-out $(TEST_SRC),$(wildcard tests/*.c))
TEST_SUPPORT_OBJ := $(TEST_SUPPORT:%.c=$(BUILD)/%.o)

ifeq ($(SAN),1)
NEXTBOT := $(BUILD)/nextbot
else
NEXTBOT := nextbot
endif

# nextbot-cc, the compiler cache's shim (cc/), beside nextbot: a compile starts it,
# so it links nothing but libc
SHIM := $(dir $(NEXTBOT))nextbot-cc
SHIM_OBJ := $(addprefix $(BUILD)/,cc/shim_main.o cc/shim.o cc/relay.o cc/args.o cc/proto.o cc/direct.o \
	util/sha256.o util/strbuf.o util/strvec.o util/xalloc.o util/error.o)

all: $(NEXTBOT) $(SHIM)

# As git's GIT-CFLAGS: the compiler and flags of the last build, rewritten only
# when they change, so a changed CC or CFLAGS rebuilds every object.
BUILD_FLAGS := $(CC) $(NB_CFLAGS) $(TEST_CFLAGS) $(CFLAGS) $(NB_LDFLAGS) $(LDFLAGS)
$(BUILD)/BUILD-FLAGS: FORCE
	@mkdir -p $(BUILD)
	@if test "x$$(cat $@ 2>/dev/null)" != 'x$(subst ','\'',$(BUILD_FLAGS))'; then \
		test -f $@ && echo "  * new compiler or flags: rebuilding everything"; \
		printf '%s\n' '$(subst ','\'',$(BUILD_FLAGS))' > $@; fi

pkgcheck:
	$(if $(MISSING_PC),@echo "nextbot: pkg-config does not find: $(MISSING_PC)" \
		"(run scripts/deps, or set PKG_CONFIG_PATH)" >&2; exit 1)

testpkgcheck:
	$(if $(MISSING_TEST_PC),@echo "nextbot: pkg-config does not find: $(MISSING_TEST_PC)" \
		"(needed by the tests; run scripts/deps)" >&2; exit 1)

$(BUILD)/%.o: %.c $(BUILD)/BUILD-FLAGS | pkgcheck
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(NB_CFLAGS) $(TEST_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/libnextbot.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# Every object is linked (not the archive), so nothing depends on archive order.
$(NEXTBOT): $(BUILD)/bot/cli/main.o $(LIB_OBJ)
	$(QLD)$(CC) $(NB_LDFLAGS) $(LDFLAGS) -o $@ $^ $(NB_LIBS)

$(SHIM): $(SHIM_OBJ)
	$(QLD)$(CC) $(NB_LDFLAGS) $(LDFLAGS) -o $@ $^

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJ) $(BUILD)/libnextbot.a | testpkgcheck
	$(QLD)$(CC) $(NB_LDFLAGS) $(LDFLAGS) -o $@ $^ $(NB_LIBS) $(TEST_LIBS)

deps:
	@scripts/deps

tests: $(NEXTBOT) $(SHIM) $(TEST_BIN)

# `make check`: every unit test (cmocka, one binary per module) and every scenario
# test (tests/t*.sh, driving the real binary), side by side (JOBS=N, default the
# number of CPUs + 1), each one's output printed whole when it ends, then the times
# and "N passed, N failed".  T=name runs the binaries and scripts whose name
# contains it.
# `make unit`: the inner loop, the unit tests without their slow, scenario-like
# cases (named *_slow; `make check` runs them), in well under a minute.
# In both, TESTS=pattern picks test cases by name inside the binaries (cmocka's
# wildcards, e.g. TESTS='oracle_*'); it sets CMOCKA_FILTER (CMOCKA_SKIP skips).
check: deps
	@$(MAKE) --no-print-directory tests
	@NEXTBOT=$(abspath $(NEXTBOT)) BUILD=$(abspath $(BUILD)) SAN=$(SAN) \
		$(if $(TESTS),CMOCKA_FILTER='$(TESTS)') tests/run-all $(TEST_BIN)

unit:
	@$(MAKE) --no-print-directory tests
	@NEXTBOT=$(abspath $(NEXTBOT)) BUILD=$(abspath $(BUILD)) SAN=$(SAN) UNIT=1 \
		$(if $(TESTS),CMOCKA_FILTER='$(TESTS)') tests/run-all $(TEST_BIN)

demo: deps
	@$(MAKE) --no-print-directory $(NEXTBOT) $(SHIM)
	@NEXTBOT=$(abspath $(NEXTBOT)) scripts/demo

# bench/sandbox_cost: what the sandbox adds to a command (bench/run's sandbox bench)
$(BUILD)/bench/sandbox_cost: $(BUILD)/bench/sandbox_cost.o $(BUILD)/libnextbot.a
	$(QLD)$(CC) $(NB_LDFLAGS) $(LDFLAGS) -o $@ $^ $(NB_LIBS)

bench: deps
	@$(MAKE) --no-print-directory $(NEXTBOT) $(BUILD)/bench/sandbox_cost
	@NEXTBOT=$(abspath $(NEXTBOT)) SANDBOX_COST=$(abspath $(BUILD)/bench/sandbox_cost) bench/run

# `make kernel-check`: the tests on the real kernel, outside `make check` (each takes
# tens of minutes): the compiler cache's byte-for-byte identity on a tinyconfig build,
# then the kernel world's nights (QEMU; see tests/kernel/nights.sh for NIGHTS, CACHE,
# INFRA).  The source from NEXTBOT_KERNEL_SRC (a tree or a tarball), else Debian's
# /usr/src/linux-source-*.tar.xz; without one each skips, saying so.
kernel-check:
	@scripts/deps --kernel
	@$(MAKE) --no-print-directory $(NEXTBOT) $(SHIM)
	@NEXTBOT=$(abspath $(NEXTBOT)) tests/kernel/cc-identity.sh
	@NEXTBOT=$(abspath $(NEXTBOT)) tests/kernel/nights.sh

fuzz: deps
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk

style:
	@scripts/check-style

install: $(NEXTBOT) $(SHIM)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(DOCDIR)/configs
	install -m 755 $(NEXTBOT) $(DESTDIR)$(BINDIR)/nextbot
	install -m 755 $(SHIM) $(DESTDIR)$(BINDIR)/nextbot-cc
	install -m 644 man/nextbot.1 $(DESTDIR)$(MANDIR)/man1/nextbot.1
	install -m 644 man/nextbot.yaml.5 $(DESTDIR)$(MANDIR)/man5/nextbot.yaml.5
	install -m 644 configs/* $(DESTDIR)$(DOCDIR)/configs/

clean:
	rm -rf build build-san nextbot nextbot-cc

.PHONY: all deps tests check unit demo bench kernel-check fuzz style install clean pkgcheck testpkgcheck FORCE
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
