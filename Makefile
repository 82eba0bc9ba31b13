# nextbot: nightly integration bot.  `make`, `make check`, `make demo`, `make install`.
# Add to the user's CFLAGS, never replace them.  SAN=1 for ASan+UBSan, V=1 for commands.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/nextbot
CC ?= cc
PKG_CONFIG ?= pkg-config
VERSION := 0.1.0

LIBS_PC := libgit2 libcurl json-c yaml-0.1 libcrypto
NB_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter \
	-Wshadow -Wformat=2 -Wstrict-prototypes -g -O2 -I. \
	-DNEXTBOT_VERSION='"$(VERSION)"' -MMD -MP -pthread
NB_CFLAGS += $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) 2>/dev/null)
NB_LIBS := $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null) -pthread
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

LIB_SRC := $(sort $(wildcard util/*.c merge/*.c notify/*.c feeds/*.c bot/*.c))
LIB_SRC := $(filter-out bot/main.c,$(LIB_SRC))
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

all: $(NEXTBOT)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QCC)$(CC) $(NB_CFLAGS) $(TEST_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/libnextbot.a: $(LIB_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# Every object is linked (not the archive), so nothing depends on archive order.
$(NEXTBOT): $(BUILD)/bot/main.o $(LIB_OBJ)
	$(QLD)$(CC) $(NB_LDFLAGS) $(LDFLAGS) -o $@ $^ $(NB_LIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJ) $(BUILD)/libnextbot.a
	$(QLD)$(CC) $(NB_LDFLAGS) $(LDFLAGS) -o $@ $^ $(NB_LIBS) $(TEST_LIBS)

deps:
	@scripts/deps

tests: $(NEXTBOT) $(TEST_BIN)

# Unit tests (cmocka, one binary per module), then scenario tests (tests/t*.sh)
# that drive the real binary.  T=name filters scenario scripts; CMOCKA_TEST_ABORT
# and cmocka's own filter (CMOCKA_FILTER) work as usual.
check: deps
	@$(MAKE) --no-print-directory tests
	@NEXTBOT=$(abspath $(NEXTBOT)) BUILD=$(abspath $(BUILD)) SAN=$(SAN) tests/run-all $(TEST_BIN)

demo: deps
	@$(MAKE) --no-print-directory $(NEXTBOT)
	@NEXTBOT=$(abspath $(NEXTBOT)) scripts/demo

bench: deps
	@$(MAKE) --no-print-directory $(NEXTBOT)
	@NEXTBOT=$(abspath $(NEXTBOT)) bench/run

fuzz: deps
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk

style:
	@scripts/check-style

install: $(NEXTBOT)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(DOCDIR)/configs
	install -m 755 $(NEXTBOT) $(DESTDIR)$(BINDIR)/nextbot
	install -m 644 man/nextbot.1 $(DESTDIR)$(MANDIR)/man1/nextbot.1
	install -m 644 man/nextbot.yaml.5 $(DESTDIR)$(MANDIR)/man5/nextbot.yaml.5
	install -m 644 configs/* $(DESTDIR)$(DOCDIR)/configs/

clean:
	rm -rf build build-san nextbot

.PHONY: all deps tests check demo bench fuzz style install clean
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
