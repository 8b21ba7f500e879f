#pragma once
#include <postgres.h>
