// A core header that reaches for PostgreSQL's.
#pragma once
#include "layout.hpp"
#include <cstdint>
#include <sys/stat.h>
#include "utils/palloc.h"
