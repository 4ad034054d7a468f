#pragma once
// A bare FreeRDP 3 client (software GDI into BGRX32, no channels) that lets the guest's own
// test look at the frames and send input without a display. Not the product's RDP client:
// just enough to prove the fixture.
//
// Thread: the test thread only.

#include <cstdint>
#include <optional>
#include <string>

typedef struct rdp_freerdp freerdp;

class MiniRdpClient {
public:
  MiniRdpClient();
  ~MiniRdpClient();
  MiniRdpClient(const MiniRdpClient&) = delete;
  MiniRdpClient& operator=(const MiniRdpClient&) = delete;

  // Connects with NLA, trusting only the given certificate fingerprint (64 hex digits).
  bool connect(uint16_t port, const std::string& user, const std::string& password,
               const std::string& sha256);
  // Processes incoming data for about `ms` milliseconds; false if the connection died.
  bool pump(int ms);
  std::optional<uint32_t> marker() const;
  int width() const;
  int height() const;
  // BGRX pixel at (x, y) as 0xRRGGBB.
  uint32_t pixel(int x, int y) const;

  bool sendKey(uint16_t flags, uint8_t scancode);
  bool sendMouse(uint16_t flags, uint16_t x, uint16_t y);

private:
  freerdp* m_instance = nullptr;
  bool m_connected = false;
};
