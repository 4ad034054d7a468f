// SandboxReport: what the reader says it applied of its sandbox (reader/ReaderSandbox), as
// bits both processes know: the reader sets them, the console requires some of them and
// names them in the evidence without linking the sandbox itself.
//
// Thread: a value type; any thread.
#pragma once

#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <utility>

namespace gc {

struct SandboxReport {
  enum Applied : quint32 {
    UserNamespace = 1u << 0,
    NetworkNamespace = 1u << 1,
    IpcNamespace = 1u << 2,
    EmptyRoot = 1u << 3,
    NoNewPrivileges = 1u << 4,
    ResourceLimits = 1u << 5,
    AddressSpaceLimit = 1u << 6,
    SyscallFilter = 1u << 7,
  };
  // What a reader must have applied before the console hands it the guest's socket.
  static constexpr quint32 kRequired = NoNewPrivileges | SyscallFilter;

  // "user,net,ipc,root,no_new_privs,limits,as,seccomp" for the evidence.
  static QString describe(quint32 applied) {
    QStringList parts;
    const std::pair<Applied, const char*> names[] = {
        {UserNamespace, "user"},   {NetworkNamespace, "net"},         {IpcNamespace, "ipc"},
        {EmptyRoot, "root"},       {NoNewPrivileges, "no_new_privs"}, {ResourceLimits, "limits"},
        {AddressSpaceLimit, "as"}, {SyscallFilter, "seccomp"},
    };
    for (const auto& [bit, name] : names)
      if (applied & bit)
        parts << QLatin1String(name);
    return parts.join(QLatin1Char(','));
  }
};

} // namespace gc
