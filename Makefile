# rsslim: RLIMIT_RSS enforcement for Linux 6.12, and the evidence.
# `make help` lists the targets and the variables you may set.

SHELL := /bin/bash
.DEFAULT_GOAL := help

BUILD     := build
KCONFIG   ?= default
RAM       ?= 256M
SWAP      ?= 512M
TIMEOUT   ?= 1200
export ACCEL KCONFIG GUEST_CPUS

CC        := gcc
CFLAGS    := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE
LDFLAGS   := -static
SELFTESTS := $(BUILD)/linux/tools/testing/selftests

WL_LIB      := workloads/wl.c
WL_HDR      := workloads/wl.h
WORKLOADS   := $(patsubst workloads/%.c,$(BUILD)/bin/%,$(filter-out $(WL_LIB),$(wildcard workloads/*.c)))
GUEST_PROGS := $(patsubst harness/guest/%.c,$(BUILD)/bin/%,$(wildcard harness/guest/*.c))
TRIMD       := $(BUILD)/bin/rsstrimd
TRIMD_SRC   := tools/rsstrimd/rsstrimd.c tools/rsstrimd/proc.c tools/rsstrimd/proc.h
HOST_TESTS  := $(patsubst tests/host/%.c,$(BUILD)/host-tests/%,$(wildcard tests/host/*.c))
GUEST_C     := $(patsubst tests/guest/%.c,$(BUILD)/guest-tests/%,$(wildcard tests/guest/*.c))
GUEST_SH    := $(patsubst tests/guest/%.sh,$(BUILD)/guest-tests/%,$(wildcard tests/guest/*.sh))
INITRAMFS   := $(BUILD)/initramfs.cpio.gz
APPS_IMAGE  := $(BUILD)/apps.cpio.gz
# The kernel's own selftests run in the guest with the knobs on and off (see
# tests/guest/80-upstream.sh for why these). Built against the tree's uapi headers.
UPSTREAM_MM := cow mkdirty madv_populate map_populate mrelease_test mremap_test \
	       mremap_dontunmap map_fixed_noreplace mlock2-tests on-fault-limit droppable
UPSTREAM    := $(BUILD)/upstream-tests
UAPI        := $(BUILD)/uapi/include/linux/mman.h
SCRIPTS     := $(wildcard harness/*.sh harness/guest/*.sh tests/guest/*.sh tests/host/*.sh tools/*/*.sh) \
	       harness/guest/init .ci/run tests/fixtures/fake-ssh

.PHONY: plots compare help deps kernel kernel-tree kernel-patches workloads host-tests guest-tests upstream-tests initramfs shell test \
	bench check clean distclean install-rsstrimd

help:
	@echo 'rsslim: make RLIMIT_RSS (prlimit --rss) mean something, and measure it.'
	@echo
	@echo 'Targets:'
	@echo '  make bench           build everything, run the scenarios, print the comparison'
	@echo '  make test            host unit tests + the patched kernel in QEMU running the guest suite'
	@echo '  make shell           boot the patched kernel and get a guest shell (try prlimit --rss)'
	@echo '  make deps            check (and as root, install) the Debian packages needed'
	@echo '  make kernel          extract linux-source-6.12, apply kernel-patch/series, build bzImage'
	@echo '  make kernel-patches  export the commits of build/linux back into kernel-patch/'
	@echo '  make kernel-tree     (re)apply kernel-patch/series to build/linux'
	@echo '  make initramfs       build the guest image (busybox, prlimit, workloads, tests)'
	@echo '  make workloads       build the static workloads into build/bin'
	@echo '  make upstream-tests  build the kernel tree'"'"'s selftests the guest suite runs'
	@echo '  make plots RUN=<id>  redraw the figures and report page of results/<id> (default latest)'
	@echo '  make compare A= B=   two bench runs side by side: change and whether the 95% intervals overlap'
	@echo '  make check           checkpatch --strict on the series, shellcheck, -Werror builds,'
	@echo '                       and the series compiled patch by patch and in six configurations'
	@echo '  make install-rsstrimd  install rsstrimd and its systemd unit (PREFIX=/usr/local DESTDIR=)'
	@echo '  make clean           remove build outputs but keep the kernel tree; distclean removes all'
	@echo
	@echo 'Variables:'
	@echo '  RAM=256M SWAP=512M   guest memory and swap size'
	@echo '  KCONFIG=default      kernel flavour: default, debug (KASAN, lockdep, DEBUG_VM), stock (no patch)'
	@echo '                       or parts-1[-N...] (only those parts of the series: make test KCONFIG=parts-1-3)'
	@echo '  ACCEL=kvm|tcg        force the accelerator (default: probe KVM, fall back to TCG)'
	@echo '  TIMEOUT=1200         seconds before a guest that does not power off is killed'
	@echo '  GUEST_CPUS=2         guest CPUs'
	@echo '  SCENARIOS= DURATION= REPEAT= LRU= RSS_LIMIT= HOG= MODE= SAMPLE_INTERVAL= RESULTS_DIR='
	@echo '                       bench controls (see README)'
	@echo '  SWAP_KIND=disk|zram|zswap  what the guest swaps to'
	@echo '  JOBS=1 HOSTS=h1,h2   guests at once (pinned apart), and other hosts to run them on (ssh)'
	@echo '  SWEEP=<name>         cross the axes of harness/sweeps/<name> (e.g. swap-and-size)'
	@echo '  RESUME=<run-id>      finish an interrupted bench run: only its missing jobs run'

deps:
	@harness/deps.sh

kernel: deps
	@harness/kernel.sh build $(KCONFIG)

kernel-tree: deps
	@harness/kernel.sh tree

kernel-patches:
	@harness/kernel.sh export

workloads: $(WORKLOADS) $(GUEST_PROGS) $(TRIMD)

$(BUILD)/bin/%: workloads/%.c $(WL_LIB) $(WL_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(WL_LIB)

$(BUILD)/bin/%: harness/guest/%.c $(WL_LIB) $(WL_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -Iworkloads -o $@ $< $(WL_LIB)

$(TRIMD): $(TRIMD_SRC)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c,$^)

# rsstrimd on this machine, as a systemd service: make install-rsstrimd, then
# systemctl daemon-reload && systemctl enable --now rsstrimd.
PREFIX  ?= /usr/local
UNITDIR ?= /etc/systemd/system
install-rsstrimd: $(TRIMD)
	install -D -m 0755 $(TRIMD) $(DESTDIR)$(PREFIX)/sbin/rsstrimd
	@mkdir -p $(DESTDIR)$(UNITDIR)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|' tools/rsstrimd/rsstrimd.service >$(DESTDIR)$(UNITDIR)/rsstrimd.service.new
	mv $(DESTDIR)$(UNITDIR)/rsstrimd.service.new $(DESTDIR)$(UNITDIR)/rsstrimd.service

$(BUILD)/host-tests/test_rsstrimd_proc: tests/host/test_rsstrimd_proc.c tools/rsstrimd/proc.c tools/rsstrimd/proc.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itools/rsstrimd -o $@ $< tools/rsstrimd/proc.c

$(BUILD)/host-tests/%: tests/host/%.c $(WL_LIB) $(WL_HDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iworkloads -o $@ $< $(WL_LIB) -lm

# Guest tests use the kernel tree's kselftest harness, so they need the tree (its
# macros trip -Wunused-parameter and -Wclobbered).
$(BUILD)/guest-tests/%: tests/guest/%.c tests/guest/guest_util.h $(SELFTESTS)/kselftest_harness.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wno-unused-parameter -Wno-clobbered $(LDFLAGS) -I$(SELFTESTS) -Itests/guest -o $@ $<

$(BUILD)/guest-tests/%: tests/guest/%.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(SELFTESTS)/kselftest_harness.h:
	@harness/kernel.sh tree

$(UAPI): $(SELFTESTS)/kselftest_harness.h
	@$(MAKE) -s -C $(BUILD)/linux O=$(CURDIR)/$(BUILD)/uapi-obj ARCH=x86_64 headers_install \
		INSTALL_HDR_PATH=$(CURDIR)/$(BUILD)/uapi >/dev/null

# Upstream code: built with the flags its own Makefile uses (its warnings are
# not ours). The optimisation level matters: test_memcontrol's alloc_anon()
# mallocs, touches and frees a buffer nobody reads, which -O2 compiles to
# "return 0"; its cgroup Makefile has no -O, the mm one has -O2.
$(UPSTREAM)/%: $(SELFTESTS)/mm/%.c $(UAPI)
	@mkdir -p $(@D)
	@: >$(@D)/local_config.h
	$(CC) -std=gnu11 -O2 -U_FORTIFY_SOURCE -w $(LDFLAGS) -isystem $(BUILD)/uapi/include -I$(@D) \
		-I$(SELFTESTS) -I$(SELFTESTS)/mm -o $@ $< $(SELFTESTS)/mm/vm_util.c \
		$(SELFTESTS)/mm/thp_settings.c -lrt -lpthread -lm

$(UPSTREAM)/test_memcontrol: $(SELFTESTS)/cgroup/test_memcontrol.c $(UAPI) Makefile
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -pthread -w $(LDFLAGS) -isystem $(BUILD)/uapi/include -I$(SELFTESTS) \
		-I$(SELFTESTS)/cgroup -o $@ $< $(SELFTESTS)/cgroup/cgroup_util.c

upstream-tests: $(addprefix $(UPSTREAM)/,$(UPSTREAM_MM) test_memcontrol)

guest-tests: $(GUEST_C) $(GUEST_SH)

host-tests: $(HOST_TESTS)

$(INITRAMFS): harness/initramfs.sh harness/guest/init $(wildcard harness/guest/*.sh harness/guest/*.awk harness/guest/*.ere harness/scenarios/*) \
		$(WORKLOADS) $(GUEST_PROGS) $(TRIMD) $(GUEST_C) $(GUEST_SH) \
		$(addprefix $(UPSTREAM)/,$(UPSTREAM_MM) test_memcontrol)
	@harness/initramfs.sh $@ $(BUILD)/bin $(BUILD)/guest-tests $(UPSTREAM)

# The real programs (redis-server, GNU sort) of the IMAGE=apps scenarios.
$(APPS_IMAGE): harness/initramfs.sh /usr/bin/redis-check-rdb /usr/bin/sort
	@harness/initramfs.sh --apps $@

initramfs: deps
	@$(MAKE) --no-print-directory $(INITRAMFS) $(APPS_IMAGE)

# Checked before anything is built: the shell's mode is one of the four.
ifneq ($(filter shell,$(MAKECMDGOALS)),)
ifneq ($(filter-out 0 1 2 3,$(MODE))$(word 2,$(MODE)),)
$(error make shell: MODE must be one of 0, 1, 2 or 3, not '$(MODE)')
endif
endif

shell: kernel initramfs
	@harness/qemu.sh --job shell --out $(BUILD)/shell --ram $(RAM) --swap $(SWAP) \
		$(if $(MODE),--append rsslim.enforce=$(MODE))

test: deps
	@harness/test.sh

bench: deps
	@harness/bench.sh

check: deps
	@harness/check.sh

compare:
	@[ -n "$(A)" ] && [ -n "$(B)" ] || { echo "error: make compare A=<run-id> B=<run-id>" >&2; exit 2; }
	@python3 harness/compare.py "$(A)" "$(B)"

RUN ?= latest
plots:
	@harness/plots.sh $(if $(findstring /,$(RUN)),$(RUN),results/$(RUN))

clean:
	rm -rf $(BUILD)/bin $(BUILD)/host-tests $(BUILD)/guest-tests $(UPSTREAM) $(BUILD)/uapi $(BUILD)/uapi-obj $(BUILD)/obj-* $(INITRAMFS) $(APPS_IMAGE) \
		$(BUILD)/test-run $(BUILD)/test-stock $(BUILD)/shell

distclean:
	rm -rf $(BUILD)
