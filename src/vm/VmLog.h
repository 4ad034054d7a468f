// Diagnostics category of the vm part ("gc.vm"); libvirt's own error reports are routed here.
#pragma once

#include <QLoggingCategory>

namespace gc {

Q_DECLARE_LOGGING_CATEGORY(lcVm)

} // namespace gc
