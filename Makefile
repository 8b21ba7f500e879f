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
# (SNOWFLAKE_RPATH, default the server's libdir; empty for none: debian/rules, where
# libdir is a directory the loader searches anyway)
SNOWFLAKE_RPATH ?= $(libdir)
comma := ,
SHLIB_LINK_INTERNAL = $(libpq) $(if $(SNOWFLAKE_RPATH),-Wl$(comma)-rpath$(comma)$(SNOWFLAKE_RPATH)$(comma)--enable-new-dtags)

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
# (PostgreSQL 18+, docs/image-volume.md), taken from its Debian package DEB
# (postgresql-NN-snowflake_VERSION_ARCH.deb, as CloudNativePG's own extension
# images take theirs): IMAGE_VOLUME/lib/snowflake.so, IMAGE_VOLUME/share/extension/
# (the control file and every SQL script) and IMAGE_VOLUME/licenses/<package>/
# (the package's copyright and LICENSE), loaded from outside the installation with
# extension_control_path = '$system:DIR/share', dynamic_library_path = '$libdir:DIR/lib'
# and shared_preload_libraries = 'snowflake'. A library with a RUNPATH or RPATH
# (a search path of the machine that built it) is refused.
IMAGE_VOLUME = build/image-volume
DEB =
deb_field = $(if $(DEB),$(shell dpkg-deb -f '$(DEB)' $(1)))
deb_major = $(patsubst postgresql-%-snowflake,%,$(call deb_field,Package))
image-volume:
	@[ -n '$(DEB)' ] || { echo 'usage: make image-volume DEB=postgresql-NN-snowflake_VERSION_ARCH.deb'; exit 2; }
	@unpacked=$$(mktemp -d) && trap 'rm -rf "$$unpacked"' EXIT && \
	dpkg-deb -x '$(DEB)' "$$unpacked" && \
	if readelf -d "$$unpacked/usr/lib/postgresql/$(deb_major)/lib/$(EXTENSION).so" | grep -E '\((RUNPATH|RPATH)\)'; then \
	    echo '$(DEB): its $(EXTENSION).so carries a library search path of the machine that built it'; exit 1; \
	fi && \
	rm -rf '$(IMAGE_VOLUME)' && \
	$(MKDIR_P) '$(IMAGE_VOLUME)/lib' '$(IMAGE_VOLUME)/share/extension' '$(IMAGE_VOLUME)/licenses/$(call deb_field,Package)' && \
	cp "$$unpacked/usr/lib/postgresql/$(deb_major)/lib/$(EXTENSION).so" '$(IMAGE_VOLUME)/lib/' && \
	cp "$$unpacked/usr/share/postgresql/$(deb_major)/extension/$(EXTENSION)".control \
	   "$$unpacked/usr/share/postgresql/$(deb_major)/extension/$(EXTENSION)"--*.sql '$(IMAGE_VOLUME)/share/extension/' && \
	cp "$$unpacked/usr/share/doc/$(call deb_field,Package)/copyright" LICENSE '$(IMAGE_VOLUME)/licenses/$(call deb_field,Package)/' && \
	chmod -R a+rX,go-w '$(IMAGE_VOLUME)'

# An OCI image of those files at its root, as CloudNativePG's extension images are
# (FROM scratch: one layer, no operating system; USER 65532:65532; the
# org.opencontainers.image.* and io.cloudnativepg.image.base.* labels, also as
# manifest annotations), for the package's architecture, in the OCI image layout
# OCI_LAYOUT under the tag <version>-<major>-<distribution> (OCI_TAG), built without
# a container daemon by umoci (Debian package umoci). DISTRIBUTION is the Debian
# release the package was built on (default: this machine's), IMAGE_SOURCE the URL
# of the source (required: the image's org.opencontainers.image.source). Push it
# with any OCI tool, e.g. skopeo copy oci:build/oci:TAG docker://REGISTRY/snowflake:TAG
OCI_LAYOUT = build/oci
DISTRIBUTION = $(shell . /etc/os-release && echo $$VERSION_CODENAME)
IMAGE_SOURCE =
IMAGE_REVISION = $(shell git rev-parse HEAD 2>/dev/null)
deb_version = $(if $(DEB),$(shell dpkg-deb -f '$(DEB)' Version | sed -E 's/^[0-9]+://; s/-[^-]*$$//'))
OCI_TAG = $(deb_version)-$(deb_major)-$(DISTRIBUTION)
image-oci: image-volume
	@[ -n '$(IMAGE_SOURCE)' ] || { echo 'make image-oci: set IMAGE_SOURCE to the URL of the source (org.opencontainers.image.source)'; exit 2; }
	[ -f '$(OCI_LAYOUT)/oci-layout' ] || umoci init --layout '$(OCI_LAYOUT)'
	umoci new --image '$(OCI_LAYOUT):$(OCI_TAG)'
	bundle=$$(mktemp -d) && rmdir "$$bundle" && \
	umoci unpack --rootless --image '$(OCI_LAYOUT):$(OCI_TAG)' "$$bundle" && \
	cp -R -p '$(IMAGE_VOLUME)/lib' '$(IMAGE_VOLUME)/share' '$(IMAGE_VOLUME)/licenses' "$$bundle/rootfs/" && \
	umoci repack --image '$(OCI_LAYOUT):$(OCI_TAG)' --history.created_by 'make image-oci' "$$bundle"; \
	status=$$?; rm -rf "$$bundle"; exit $$status
	created=$$(date -u +%Y-%m-%dT%H:%M:%SZ) && \
	title='$(EXTENSION) $(deb_version) $(deb_major) $(DISTRIBUTION)' && \
	description='A $(EXTENSION) $(deb_version) image volume for PostgreSQL $(deb_major) on $(DISTRIBUTION) (CloudNativePG): lib/ and share/extension/ for dynamic_library_path and extension_control_path' && \
	set -- && for pair in \
	    "org.opencontainers.image.created=$$created" \
	    'org.opencontainers.image.url=$(IMAGE_SOURCE)' \
	    'org.opencontainers.image.source=$(IMAGE_SOURCE)' \
	    'org.opencontainers.image.documentation=$(IMAGE_SOURCE)' \
	    'org.opencontainers.image.version=$(deb_version)' \
	    'org.opencontainers.image.revision=$(IMAGE_REVISION)' \
	    'org.opencontainers.image.vendor=the $(EXTENSION) authors' \
	    'org.opencontainers.image.authors=the $(EXTENSION) authors' \
	    "org.opencontainers.image.title=$$title" \
	    "org.opencontainers.image.description=$$description" \
	    'org.opencontainers.image.licenses=PostgreSQL' \
	    'org.opencontainers.image.base.name=scratch' \
	    'io.cloudnativepg.image.base.name=ghcr.io/cloudnative-pg/postgresql:$(deb_major)-minimal-$(DISTRIBUTION)' \
	    'io.cloudnativepg.image.base.pgmajor=$(deb_major)' \
	    'io.cloudnativepg.image.base.os=$(DISTRIBUTION)'; do \
	    set -- "$$@" --config.label="$$pair" --manifest.annotation="$$pair"; \
	done && \
	umoci config --image '$(OCI_LAYOUT):$(OCI_TAG)' --no-history --os linux \
	    --architecture '$(call deb_field,Architecture)' --config.user 65532:65532 "$$@"
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
