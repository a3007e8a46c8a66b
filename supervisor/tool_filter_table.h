// The tool filters compiled at build time (supervisor/filtergen.cc writes the
// data), indexed by ToolFilterIndex.
#pragma once

#include <linux/filter.h>

#include <cstddef>

#include "supervisor/tool_filter.h"

namespace cordon::supervisor {

struct CompiledToolFilter {
  const sock_filter* insns;
  size_t size;
  bool has_notify;
  size_t prefix_size;
};

extern const CompiledToolFilter kToolFilterTable[kToolFilterCombinations];

}  // namespace cordon::supervisor
