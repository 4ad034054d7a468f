#pragma once
// A bare FreeRDP 3 client (software GDI into BGRX32) that lets the guest's own test look at
// the frames and send input without a display. By default it asks for no channel; with
// setChannels() it joins drdynvc and, optionally, decodes RDPGFX through FreeRDP's GDI
// (channels processed synchronously on the test thread). Not the product's RDP client: just
// enough to prove the fixture.
//
// Thread: the test thread only.

#include <cstdint>
#include <optional>
#include <string>

typedef struct rdp_freerdp freerdp;

class MiniRdpClient {
public:
  // Sees what the server sends before FreeRDP does, and may keep it from FreeRDP: the hostile
  // guest's own test decodes the attacks there instead of letting the library parse them.
  class Tap {
  public:
    virtual ~Tap() = default;
    // One chunk of a static channel (flags: CHANNEL_FLAG_FIRST/LAST); false: FreeRDP never sees it.
    virtual bool channelData(uint16_t channelId, const uint8_t* data, size_t size, uint32_t flags,
                             size_t totalSize) = 0;
    // One fast-path output PDU; false: FreeRDP gets an empty one instead.
    virtual bool fastPath(const uint8_t* data, size_t size) = 0;
  };
  // Before connect(). The tap must outlive the connection.
  void setTap(Tap* tap);
  // Raw data on a joined static channel (the tap answers for the channels it keeps).
  bool sendChannelData(uint16_t channelId, const uint8_t* data, size_t size);
  uint16_t channelId(const char* name) const;

  MiniRdpClient();
  ~MiniRdpClient();
  MiniRdpClient(const MiniRdpClient&) = delete;
  MiniRdpClient& operator=(const MiniRdpClient&) = delete;

  // GfxWithoutListener: announces GFX support but loads no RDPGFX plugin, so it refuses the
  // server's RDPGFX channel.
  enum class Channels { None, Drdynvc, DrdynvcAndGfx, GfxWithoutListener };
  // Before connect(): which channels to announce and load.
  void setChannels(Channels channels) { m_channels = channels; }
  // RDPGFX is connected and FreeRDP's GDI draws its surfaces.
  bool gfxActive() const;
  // A Refresh Rect PDU for (x, y, w, h).
  bool sendRefresh(uint16_t x, uint16_t y, uint16_t w, uint16_t h);

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
  Channels m_channels = Channels::None;
};
