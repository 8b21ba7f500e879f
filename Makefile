# snowflake — PGXS build. `make && make install`; tests: test/run; benchmark: make bench.
EXTENSION = snowflake
MODULE_big = snowflake
# every install and upgrade script (a released one is never edited: docs/development.md)
DATA = $(wildcard sql/snowflake--*.sql)
CORE_OBJS = src/core/text.o src/core/codec.o src/core/layout_names.o src/core/ff1.o src/core/keyfile.o
OBJS = $(CORE_OBJS) src/pg/boundary.o src/pg/datadir.o src/pg/settings.o src/pg/module.o src/pg/identity.o src/pg/lease_file.o src/pg/upgrade.o src/pg/startup.o src/pg/lease_wal.o src/pg/lease_write.o src/pg/lease_writer.o src/pg/pending.o src/pg/fence.o src/pg/adopt.o src/pg/repair.o src/pg/generate.o src/pg/type.o src/pg/ids.o src/pg/estimate.o src/pg/family.o src/pg/errors.o src/pg/public.o src/pg/registry.o src/pg/registry_release.o src/pg/registry_client.o src/pg/registry_settings.o src/pg/registry_sql.o
# appended to, so that `make PG_CXXFLAGS=...` keeps C++20
override PG_CXXFLAGS += -std=c++20 -Wno-register -Wno-missing-field-initializers
# OpenSSL's AES for public ids (FF1), as pgcrypto uses it
SHLIB_LINK = -lstdc++ -lcrypto
# libpq, for the registry of worker ids (as dblink and postgres_fdw link it),
# the server's own: found in its libdir first, so that a server whose libpq is
# not the system's (a private installation) loads one libpq for every library
PG_CPPFLAGS += -I$(libpq_srcdir)
SHLIB_LINK_INTERNAL = $(libpq) -Wl,-rpath,$(libdir),--enable-new-dtags

# pg_regress (sql/*.sql against expected/*.out) on a temporary, preloaded instance.
REGRESS = catalog neutrality type family decode generate convert partition textforms public layouts registry labels
REGRESS_OPTS = --temp-instance=tmp_check --temp-config=test/regress.conf

# No LLVM JIT bitcode: it would need clang for the C++ sources.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The TAP files of test/t against the installed server, as an ordinary user
# (make install first): make prove_installcheck, or PROVE_TESTS=test/t/005_smoke.pl
# for one file. Each file starts its own preloaded instances; test/run runs
# them all, as root, with what they need installed.
PROVE_TESTS ?= test/t/*.pl
PG_PROVE_FLAGS += -I test/t
PROVE_FLAGS += --timer
.PHONY: prove_installcheck
prove_installcheck:
	$(prove_installcheck)

# Every object depends on the headers (PGXS tracks no header dependencies).
$(OBJS): $(wildcard src/core/*.hpp src/pg/*.hpp)

# GoogleTest for the pure C++ core, plain and under the thread, address and
# undefined-behaviour sanitizers.
UNIT_SOURCES = test/unit/*.cpp src/core/*.cpp
UNIT_CXX = $(CXX) -std=c++20 -g -Wall -Wextra -pthread
GTEST_BIN = test/unit/core_tests
$(GTEST_BIN): test/unit/*.cpp test/unit/*.hpp src/core/*.hpp src/core/*.cpp
	$(UNIT_CXX) -O2 -o $@ $(UNIT_SOURCES) -lgtest -lgtest_main -lcrypto
$(GTEST_BIN)-tsan: test/unit/*.cpp test/unit/*.hpp src/core/*.hpp src/core/*.cpp
	$(UNIT_CXX) -O1 -fsanitize=thread -o $@ $(UNIT_SOURCES) -lgtest -lgtest_main -lcrypto
$(GTEST_BIN)-asan: test/unit/*.cpp test/unit/*.hpp src/core/*.hpp src/core/*.cpp
	$(UNIT_CXX) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -o $@ $(UNIT_SOURCES) -lgtest -lgtest_main -lcrypto

unit: $(GTEST_BIN) $(GTEST_BIN)-tsan $(GTEST_BIN)-asan
	./$(GTEST_BIN)-tsan --gtest_brief=1
	./$(GTEST_BIN)-asan --gtest_brief=1
	./$(GTEST_BIN)

# libFuzzer targets for every parser of the core (test/fuzz/*_fuzz.cpp), with
# Debian's clang under the address and undefined-behaviour sanitizers. Each runs
# FUZZ_RUNS executions (and, if FUZZ_SECONDS is set, at most that many seconds)
# from a copy of its seeds (test/fuzz/corpus/<name>): new inputs go to a
# temporary directory, never into the tree; a crashing input is kept as
# test/fuzz/<name>_fuzz.crash-<sha1>. Short run: make fuzz FUZZ_SECONDS=10
FUZZ_TARGETS = id timestamp lease base32 base62 layout public keyfile
FUZZ_BINS = $(FUZZ_TARGETS:%=test/fuzz/%_fuzz)
FUZZ_CXX = clang++ -std=c++20 -g -O1 -Wall -Wextra -Wno-string-concatenation -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_RUNS = 10000000
FUZZ_SECONDS = 0
test/fuzz/%_fuzz: test/fuzz/%_fuzz.cpp test/fuzz/fuzz.hpp src/core/*.hpp src/core/*.cpp
	$(FUZZ_CXX) -o $@ $< src/core/*.cpp -lcrypto

fuzz: $(FUZZ_BINS)
	@for target in $(FUZZ_TARGETS); do \
	    work=$$(mktemp -d) && cp test/fuzz/corpus/$$target/* "$$work"/ && \
	    if ./test/fuzz/$${target}_fuzz -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) \
	        -artifact_prefix=test/fuzz/$${target}_fuzz. "$$work" >"$$work.log" 2>&1; then \
	        echo "fuzz $$target: $$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$$work.log" | \
	            awk '{ printf "%d runs in %d s, %d exec/s", $$2, $$5, $$2 / ($$5 ? $$5 : 1) }'), no crash"; \
	        rm -rf "$$work" "$$work.log"; \
	    else \
	        tail -n 40 "$$work.log"; echo "fuzz $$target: FAILED (input kept as test/fuzz/$${target}_fuzz.crash-*)"; \
	        rm -rf "$$work" "$$work.log"; exit 1; \
	    fi; \
	done

# Google Benchmark of the core alone (no server), then the server benchmark.
BENCH_CORE = test/bench/core_bench
$(BENCH_CORE): test/bench/core.cpp src/core/*.hpp src/core/*.cpp
	$(CXX) -std=c++20 -O2 -g -Wall -Wextra -pthread -o $@ test/bench/core.cpp src/core/*.cpp -lbenchmark -lcrypto

bench-core: $(BENCH_CORE)
	./$(BENCH_CORE)

bench: $(BENCH_CORE)
	BENCH_CORE=$(abspath $(BENCH_CORE)) bash test/bench/run

# The release tarball of the committed tree (git archive): snowflake-<version>.tar.gz
DIST_VERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" snowflake.control)
dist:
	git archive --format=tar.gz --prefix=snowflake-$(DIST_VERSION)/ -o snowflake-$(DIST_VERSION).tar.gz HEAD
	@echo "snowflake-$(DIST_VERSION).tar.gz"

# The extension's files as an image volume holds them for CloudNativePG
# (PostgreSQL 18+, docs/image-volume.md): IMAGE_VOLUME/lib/snowflake.so and
# IMAGE_VOLUME/share/extension/ (the control file and every SQL script), loaded
# from outside the installation with extension_control_path = '$system:DIR/share',
# dynamic_library_path = '$libdir:DIR/lib' and shared_preload_libraries = 'snowflake'.
IMAGE_VOLUME = build/image-volume
image-volume: all
	rm -f '$(IMAGE_VOLUME)/lib/$(shlib)' '$(IMAGE_VOLUME)'/share/extension/$(EXTENSION).control '$(IMAGE_VOLUME)'/share/extension/$(EXTENSION)--*.sql
	$(MKDIR_P) '$(IMAGE_VOLUME)/lib' '$(IMAGE_VOLUME)/share/extension'
	$(INSTALL_SHLIB) $(shlib) '$(IMAGE_VOLUME)/lib/'
	$(INSTALL_DATA) $(EXTENSION).control $(DATA) '$(IMAGE_VOLUME)/share/extension/'

# An OCI image of those files at its root (one layer, no operating system), in
# the OCI image layout OCI_LAYOUT under the tag OCI_TAG, built without a
# container daemon by umoci (Debian package umoci); push it with any OCI tool,
# e.g. skopeo copy oci:build/oci:TAG docker://REGISTRY/snowflake:TAG
OCI_LAYOUT = build/oci
OCI_TAG = $(DIST_VERSION)-pg$(MAJORVERSION)
image-oci: image-volume
	[ -f '$(OCI_LAYOUT)/oci-layout' ] || umoci init --layout '$(OCI_LAYOUT)'
	umoci new --image '$(OCI_LAYOUT):$(OCI_TAG)'
	bundle=$$(mktemp -d) && rmdir "$$bundle" && \
	umoci unpack --rootless --image '$(OCI_LAYOUT):$(OCI_TAG)' "$$bundle" && \
	cp -R -p '$(IMAGE_VOLUME)/lib' '$(IMAGE_VOLUME)/share' "$$bundle/rootfs/" && \
	umoci repack --image '$(OCI_LAYOUT):$(OCI_TAG)' --history.created_by 'make image-oci' "$$bundle"; \
	status=$$?; rm -rf "$$bundle"; exit $$status
	umoci config --image '$(OCI_LAYOUT):$(OCI_TAG)' --no-history \
	    --manifest.annotation org.opencontainers.image.title=snowflake \
	    --manifest.annotation org.opencontainers.image.version=$(DIST_VERSION) \
	    --manifest.annotation org.opencontainers.image.description='snowflake $(DIST_VERSION) for PostgreSQL $(MAJORVERSION): lib/ and share/extension/ for extension_control_path and dynamic_library_path'
	umoci gc --layout '$(OCI_LAYOUT)'
	@echo "$(OCI_LAYOUT):$(OCI_TAG)"

# The house rules of src/pg: the one boundary, and no two files needing each
# other; that each bug test/mutate plants still applies to the tree; then
# test/house on trees that each break a rule (test/house-fixtures).
check-house: $(OBJS)
	python3 test/house $(filter src/pg/%,$(OBJS))
	python3 test/mutate --check
	CXX='$(CXX)' python3 test/house-fixtures/run

# The seeded fault-injection run (test/chaos), longer than test/run's: the
# checker's self-test, then CHAOS_SECONDS of each seed of CHAOS_SEEDS (seeds and
# ranges: "1-100 200"), CHAOS_OVERLAP faults at once, the last CHAOS_QUIET
# seconds without faults (the final phase, at least 30 s); needs the extension
# installed and its PostgreSQL's programs on PATH, as a user that may run
# servers. Any fault kinds: make check-chaos CHAOS_FAULTS=all. Each seed's
# output goes to chaos-seeds.log; the closing line sums the seeds' ids.
CHAOS_SEEDS = 1-6
CHAOS_SECONDS = 300
CHAOS_FAULTS = default
CHAOS_OVERLAP = 2
CHAOS_QUIET = 30
# the models of test/model (SPIN): the registry's rules, checked exhaustively
check-model:
	bash test/model/run

check-chaos:
	python3 test/chaos/run --selftest
	@failed=""; n=0; : >chaos-seeds.log; for spec in $(CHAOS_SEEDS); do \
	    case $$spec in *-*) seeds=$$(seq $${spec%-*} $${spec#*-});; *) seeds=$$spec;; esac; \
	    for seed in $$seeds; do \
	        n=$$((n + 1)); \
	        python3 test/chaos/run --seed $$seed --seconds $(CHAOS_SECONDS) --faults $(CHAOS_FAULTS) \
	            --overlap $(CHAOS_OVERLAP) --quiet $(CHAOS_QUIET) >chaos-seed.log 2>&1 || failed="$$failed $$seed"; \
	        cat chaos-seed.log >>chaos-seeds.log; grep -E '^chaos: (seed [0-9]+|VIOLATIONS|.*the run failed)' chaos-seed.log || true; \
	    done; \
	done; rm -f chaos-seed.log; \
	ids=$$(awk '/^chaos: seed [0-9]+, [0-9]+ ids/ { n += $$4 } END { print n + 0 }' chaos-seeds.log); \
	if [ -n "$$failed" ]; then echo "check-chaos: $$n seeds of $(CHAOS_SECONDS) s, $$ids ids; seeds with violations or failures:$$failed"; exit 1; fi; \
	echo "check-chaos: $$n seeds of $(CHAOS_SECONDS) s, $$ids ids, no violation"

.PHONY: unit fuzz bench bench-core dist image-volume image-oci check-house check-chaos check-model
EXTRA_CLEAN = build chaos_check chaos-seeds.log chaos-seed.log $(BENCH_CORE) $(GTEST_BIN) $(GTEST_BIN)-tsan $(GTEST_BIN)-asan $(FUZZ_BINS) tmp_check results regression.diffs regression.out
