// The private line protocol between the console (ActionSocketServer) and `guest-console mcp`
// (RelayConnection) on the run directory's Unix socket: its version, operations, limits and
// socket name. The messages themselves are relay/RelayWire.h. Both ends include this header.
#pragma once

#include <QLatin1StringView>
#include <QtGlobal>

namespace gc::relay {

inline constexpr int kProtocol = 1;
// The one action tool we implement; a grant naming any other tool is not authorized.
inline constexpr QLatin1StringView kActionTool("perform_action");

inline constexpr QLatin1StringView kOpStatus("status");
inline constexpr QLatin1StringView kOpCapture("capture_desktop");
inline constexpr QLatin1StringView kOpZoom("zoom_desktop"); // an observation like capture
inline constexpr QLatin1StringView kOpPerform("perform_action");
inline constexpr QLatin1StringView kOpLock("request_lock");

// Relay → console lines are small requests; console → relay lines may carry a PNG.
inline constexpr qsizetype kMaxRequestBytes = 64 * 1024;
inline constexpr qsizetype kMaxReplyBytes = 64 * 1024 * 1024;

// The socket's name inside the run directory (RunDirectory::mcpSocketPath()).
inline constexpr QLatin1StringView kSocketName("mcp.sock");

} // namespace gc::relay
