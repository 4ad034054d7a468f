#include "vm/VmLog.h"

namespace gc {

Q_LOGGING_CATEGORY(lcVm, "gc.vm")

} // namespace gc
