// The one error vocabulary of Guest Console: typed refusal codes with a stable string
// form, used alike by the CLI, the control channel, the panel protocol, MCP results and
// the evidence log. Add a code by adding one line to GC_REFUSAL_CODES; never rename one.
#pragma once

#include <QString>
#include <QStringView>

#include <optional>

// X(Enumerator, "STABLE_NAME", "what it means, for the operator")
#define GC_REFUSAL_CODES(X)                                                                                  \
  /* grant */                                                                                                \
  X(GrantUnreadable, "GRANT_UNREADABLE", "the grant file cannot be read")                                    \
  X(GrantSchema, "GRANT_SCHEMA", "the grant is malformed or violates the schema")                            \
  X(GrantExpired, "GRANT_EXPIRED", "the grant has expired")                                                  \
  X(GrantNotYetValid, "GRANT_NOT_YET_VALID", "the grant is not valid yet")                                   \
  X(GrantStale, "GRANT_STALE", "the grant was issued too long ago")                                          \
  X(GrantLifetime, "GRANT_LIFETIME", "the grant's lifetime exceeds the configured maximum")                  \
  X(GrantReused, "GRANT_REUSED", "the grant was already consumed")                                           \
  X(GrantSignature, "GRANT_SIGNATURE", "the grant's signature is missing or invalid")                        \
  X(GrantLedger, "GRANT_LEDGER", "the consumed-grants ledger cannot be used")                                \
  X(GrantIssuerKeyMissing, "GRANT_ISSUER_KEY_MISSING", "no grant issuer key is configured")                  \
  X(RunAlreadyOpen, "RUN_ALREADY_OPEN", "a console is already open for this run")                            \
  /* binding to the exact VM */                                                                              \
  X(LibvirtUnavailable, "LIBVIRT_UNAVAILABLE", "libvirt cannot be reached at the grant's URI")               \
  X(LibvirtUriForbidden, "LIBVIRT_URI_FORBIDDEN", "the libvirt URI is not a local driver")                   \
  X(VmNotFound, "VM_NOT_FOUND", "no domain has the grant's UUID")                                            \
  X(VmNameMismatch, "VM_NAME_MISMATCH", "the domain's name differs from the grant's")                        \
  X(VmNotRunning, "VM_NOT_RUNNING", "the domain is not running")                                             \
  X(VmGone, "VM_GONE", "the domain stopped, paused or was redefined")                                        \
  X(RdpRuleNone, "RDP_RULE_NONE", "no forward reaches the guest's RDP port")                                 \
  X(RdpRuleAmbiguous, "RDP_RULE_AMBIGUOUS", "more than one forward reaches the guest's RDP port")            \
  X(RdpRuleNotLoopback, "RDP_RULE_NOT_LOOPBACK", "the RDP forward does not bind 127.0.0.1 only")             \
  X(RdpRuleRange, "RDP_RULE_RANGE", "the RDP forward is a port range, not a single port")                    \
  X(RdpPortMismatch, "RDP_PORT_MISMATCH", "the RDP forward's host port differs from the grant's")            \
  X(RdpPortConflict, "RDP_PORT_CONFLICT", "another domain claims the same host port")                        \
  X(PublicListener, "PUBLIC_LISTENER", "the RDP port is also listened on beyond loopback")                   \
  /* RDP session */                                                                                          \
  X(GuestCertMismatch, "GUEST_CERT_MISMATCH", "the guest's certificate does not match the pin")              \
  X(RdpUnreachable, "RDP_UNREACHABLE", "the guest's RDP server cannot be reached")                           \
  X(RdpProtocol, "RDP_PROTOCOL", "the RDP connection failed")                                                \
  X(AuthFailed, "AUTH_FAILED", "the guest refused the credentials")                                          \
  X(AuthCancelled, "AUTH_CANCELLED", "the operator cancelled the credential prompt")                         \
  X(AuthExhausted, "AUTH_EXHAUSTED", "too many failed credential attempts")                                  \
  X(RdpLost, "RDP_LOST", "the RDP connection was lost")                                                      \
  X(RdpRedirectRefused, "RDP_REDIRECT_REFUSED", "the guest tried to redirect the connection")                \
  X(RdpDesktopMismatch, "RDP_DESKTOP_MISMATCH", "the guest's desktop size differs from the grant's")         \
  X(RdpChannelRefused, "RDP_CHANNEL_REFUSED", "the guest asked for a channel the console does not open")     \
  X(RdpProtocolViolation, "RDP_PROTOCOL_VIOLATION",                                                          \
    "the guest sent data that breaks the protocol or a console rule")                                        \
  X(RdpResourceLimit, "RDP_RESOURCE_LIMIT", "the guest asked for more than the grant's desktop allows")      \
  X(RdpReaderFailed, "RDP_READER_FAILED", "the process that reads the guest failed or broke its protocol")   \
  X(GuestUnconfirmed, "GUEST_UNCONFIRMED", "the guest did not confirm that it processed the input")          \
  X(InputSendFailed, "INPUT_SEND_FAILED", "an input event could not be sent to the guest")                   \
  /* phases, input gate and lock barrier */                                                                  \
  X(IllegalTransition, "ILLEGAL_TRANSITION", "the phase transition is not allowed")                          \
  X(PhaseLocked, "PHASE_LOCKED", "input is closed: the console is locked")                                   \
  X(PhaseWrong, "PHASE_WRONG", "not allowed in the current phase")                                           \
  X(QueueFull, "QUEUE_FULL", "the input queue is full")                                                      \
  X(RateLimit, "RATE_LIMIT", "input arrives faster than allowed")                                            \
  X(InputInvalid, "INPUT_INVALID", "the input event is out of range")                                        \
  X(ScancodeForbidden, "SCANCODE_FORBIDDEN", "the key is not one the panel can send")                        \
  X(SequenceInvalid, "SEQUENCE_INVALID", "the input sequence number is out of order")                        \
  X(DrainFailed, "DRAIN_FAILED", "queued input could not be delivered before the lock")                      \
  X(DrainTimeout, "DRAIN_TIMEOUT", "queued input was not delivered before the lock deadline")                \
  /* panel protocol */                                                                                       \
  X(PanelBusy, "PANEL_BUSY", "another panel is already connected")                                           \
  X(PanelOrigin, "PANEL_ORIGIN", "the panel's Origin is not allowed")                                        \
  X(PanelUnauthorized, "PANEL_UNAUTHORIZED", "the panel's hello does not carry the capability")              \
  X(PanelTimeout, "PANEL_TIMEOUT", "the panel did not say hello in time")                                    \
  X(PanelMismatch, "PANEL_MISMATCH", "the panel's run, task or metadata differ from the grant")              \
  X(PanelPeerUnknown, "PANEL_PEER_UNKNOWN",                                                                  \
    "the kernel could not say which local user owns the panel connection")                                   \
  X(ProtocolMalformed, "PROTOCOL_MALFORMED", "the message is not valid protocol JSON")                       \
  X(ProtocolOversize, "PROTOCOL_OVERSIZE", "the message is too large")                                       \
  X(ProtocolBinary, "PROTOCOL_BINARY", "binary messages from the panel are not accepted")                    \
  X(ProtocolUnknownType, "PROTOCOL_UNKNOWN_TYPE", "the message type is unknown")                             \
  X(RouteForbidden, "ROUTE_FORBIDDEN", "this route (clipboard, file, macro, action…) does not exist")        \
  X(Flood, "FLOOD", "too many messages")                                                                     \
  /* capture, MCP and the one action */                                                                      \
  X(McpNotAuthorized, "MCP_NOT_AUTHORIZED", "this MCP server or tool is not the one the grant authorizes")   \
  X(RunNotFound, "RUN_NOT_FOUND", "no console is running for this run id")                                   \
  X(CaptureNotAllowed, "CAPTURE_NOT_ALLOWED", "Capture Desktop is not allowed in this phase")                \
  X(ObservationInvalid, "OBSERVATION_INVALID",                                                               \
    "the capture size or zoom region is not one the grant allows")                                           \
  X(ActionInvalid, "ACTION_INVALID", "the action is not one the grant allows")                               \
  X(AlreadyActed, "ALREADY_ACTED", "the one action was already used")                                        \
  X(ActionUnsupported, "ACTION_UNSUPPORTED", "the guest's RDP server cannot carry this action")              \
  /* lifecycle */                                                                                            \
  X(ActionDone, "ACTION_DONE", "the one action was performed; the run is complete")                          \
  X(Expired, "EXPIRED", "the grant expired while the console was open")                                      \
  X(Panic, "PANIC", "the operator pressed panic")                                                            \
  X(OperatorClose, "OPERATOR_CLOSE", "the operator closed the console")                                      \
  X(WindowReload, "WINDOW_RELOAD", "VS Code reloaded or closed the window that held the console")            \
  X(ParentGone, "PARENT_GONE", "the parent process went away")                                               \
  X(ResourceExhausted, "RESOURCE_EXHAUSTED", "the console lacks a resource it needs (descriptors, memory)")  \
  X(PrivacyViolation, "PRIVACY_VIOLATION", "a privacy control could not be applied")                         \
  X(EvidenceHeadMismatch, "EVIDENCE_HEAD_MISMATCH", "the evidence log does not end at the head")             \
  X(Internal, "INTERNAL", "internal error")

namespace gc {

enum class Refusal {
#define GC_REFUSAL_ENUM(e, name, text) e,
  GC_REFUSAL_CODES(GC_REFUSAL_ENUM)
#undef GC_REFUSAL_ENUM
};

// The stable string form, e.g. "GRANT_SCHEMA".
QString refusalName(Refusal code);
// A short operator-facing explanation.
QString refusalText(Refusal code);
std::optional<Refusal> refusalFromName(QStringView name);
// Every code, in declaration order (for tests and for the TypeScript mirror check).
const QList<Refusal>& allRefusals();

// A typed refusal with a human message. Messages never carry secrets.
struct Failure {
  Refusal code = Refusal::Internal;
  QString message;

  QString toString() const { return refusalName(code) + QStringLiteral(": ") + message; }
};

} // namespace gc
