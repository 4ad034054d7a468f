// What a validating front reports when the guest's bytes break a rule: the PDU kind and the
// rule, both static strings of ours (never a byte the guest sent), so they can go into the
// evidence as they are. Every front and decoder under src/rdp/ that reads guest bytes
// returns Checked<T>: the parsed value, or the Violation that stopped it.
//
// Thread: value types; any thread.
#pragma once

#include <string_view>
#include <variant>

namespace gc::front {

struct Violation {
  enum class Kind {
    Protocol, // RDP_PROTOCOL_VIOLATION: the bytes break the spec or a console rule
    Resource, // RDP_RESOURCE_LIMIT: a well-formed request for more than the bounds allow
    Desktop,  // RDP_DESKTOP_MISMATCH: a desktop size other than the grant's (size_from "grant")
  };
  Kind kind = Kind::Protocol;
  std::string_view pdu;  // e.g. "rdpgfx.SurfaceToSurface", "fastpath.Bitmap", "drdynvc.DataFirst"
  std::string_view rule; // e.g. "destination rectangle outside the surface"

  static constexpr Violation protocol(std::string_view pdu, std::string_view rule) {
    return {Kind::Protocol, pdu, rule};
  }
  static constexpr Violation resource(std::string_view pdu, std::string_view rule) {
    return {Kind::Resource, pdu, rule};
  }
  static constexpr Violation desktop(std::string_view pdu, std::string_view rule) {
    return {Kind::Desktop, pdu, rule};
  }
};

// Ok: the empty success of a check that produces nothing.
// The refusals of one PDU's parser, each named by its rule:
//   constexpr ProtocolRules bad{kPdu};  ...  return bad("stream shorter than its header");
struct ProtocolRules {
  std::string_view pdu;
  constexpr Violation operator()(std::string_view rule) const { return Violation::protocol(pdu, rule); }
};

struct Ok {};

template <typename T> using Checked = std::variant<T, Violation>;

template <typename T> constexpr bool isViolation(const Checked<T>& c) {
  return std::holds_alternative<Violation>(c);
}

} // namespace gc::front
