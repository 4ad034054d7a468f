// The private line protocol between the console (ActionSocketServer) and `guest-console mcp`
// (McpRelay) on the run directory's Unix socket. One JSON object per line, `type` first.
// Both ends include this header: it is the one source of the names and limits.
//
//   console → relay  {"type":"hello","protocol":1,"run":R,"server":S,"tool":T,
//                     "candidates":[ids…],"expires_at":RFC3339}
//                                                     (sent on accept; ids empty = free action)
//   relay → console  {"type":"bind","server":S,"tool":T} (what the relay will serve)
//   console → relay  {"type":"bound"}                 (requests are accepted from now on)
//   relay → console  {"type":"call","id":N,"op":OP,"arguments":{…}}
//   console → relay  {"type":"result","id":N,"result":{…}}
//                    {"type":"error","id":N,"code":C,"message":M[,"receipt":{…}]}
//   console → relay  {"type":"refused","code":C,"message":M} then the console closes.
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
