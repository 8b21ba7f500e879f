# snowflake — PGXS build. `make && make install`; tests: test/run; benchmark: make bench.
EXTENSION = snowflake
MODULE_big = snowflake
DATA = sql/snowflake--1.0.sql
CORE_OBJS = src/core/text.o src/core/codec.o src/core/layouts.o
OBJS = $(CORE_OBJS) src/pg/module.o src/pg/lease.o src/pg/generate.o src/pg/type.o src/pg/ids.o src/pg/estimate.o src/pg/errors.o
PG_CXXFLAGS = -std=c++20 -Wno-register -Wno-missing-field-initializers
SHLIB_LINK = -lstdc++

# pg_regress (sql/*.sql against expected/*.out) on a temporary, preloaded instance.
REGRESS = neutrality type decode generate convert partition textforms layouts
REGRESS_OPTS = --temp-instance=tmp_check --temp-config=test/regress.conf

# No LLVM JIT bitcode: it would need clang for the C++ sources.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Every object depends on the headers (PGXS tracks no header dependencies).
$(OBJS): $(wildcard src/core/*.hpp src/pg/*.hpp)

# GoogleTest for the pure C++ core, plain and under the thread, address and
# undefined-behaviour sanitizers.
UNIT_SOURCES = test/unit/*.cpp src/core/*.cpp
UNIT_CXX = $(CXX) -std=c++20 -g -Wall -Wextra -pthread
GTEST_BIN = test/unit/core_tests
$(GTEST_BIN): test/unit/*.cpp test/unit/*.hpp src/core/*.hpp src/core/*.cpp
	$(UNIT_CXX) -O2 -o $@ $(UNIT_SOURCES) -lgtest -lgtest_main
$(GTEST_BIN)-tsan: test/unit/*.cpp test/unit/*.hpp src/core/*.hpp src/core/*.cpp
	$(UNIT_CXX) -O1 -fsanitize=thread -o $@ $(UNIT_SOURCES) -lgtest -lgtest_main
$(GTEST_BIN)-asan: test/unit/*.cpp test/unit/*.hpp src/core/*.hpp src/core/*.cpp
	$(UNIT_CXX) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -o $@ $(UNIT_SOURCES) -lgtest -lgtest_main

unit: $(GTEST_BIN) $(GTEST_BIN)-tsan $(GTEST_BIN)-asan
	./$(GTEST_BIN)-tsan --gtest_brief=1
	./$(GTEST_BIN)-asan --gtest_brief=1
	./$(GTEST_BIN)

# Google Benchmark of the core alone (no server), then the server benchmark.
BENCH_CORE = test/bench/core_bench
$(BENCH_CORE): test/bench/core.cpp src/core/*.hpp
	$(CXX) -std=c++20 -O2 -g -Wall -Wextra -pthread -o $@ test/bench/core.cpp -lbenchmark

bench-core: $(BENCH_CORE)
	./$(BENCH_CORE)

bench: $(BENCH_CORE)
	BENCH_CORE=$(abspath $(BENCH_CORE)) bash test/bench/run

.PHONY: unit bench bench-core
EXTRA_CLEAN = $(BENCH_CORE) $(GTEST_BIN) $(GTEST_BIN)-tsan $(GTEST_BIN)-asan tmp_check results regression.diffs regression.out
