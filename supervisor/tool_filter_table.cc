#include "supervisor/tool_filter_table.h"

namespace cordon::supervisor {
Result<BpfProgram> BuildToolFilter(const ToolFilterOptions& opts) {
  const CompiledToolFilter& f = kToolFilterTable[ToolFilterIndex(opts)];
  return BpfProgram{{f.insns, f.insns + f.size}, f.has_notify, f.prefix_size};
}

}  // namespace cordon::supervisor
