#include "MiniRdpClient.h"

#include "testguest/IdentityMarker.h"

#include <freerdp/freerdp.h>
#include <freerdp/gdi/gdi.h>
#include <freerdp/input.h>
#include <freerdp/settings.h>
#include <winpr/synch.h>

#include <chrono>

namespace {

BOOL onDesktopResize(rdpContext* context) {
  return gdi_resize(context->gdi, freerdp_settings_get_uint32(context->settings, FreeRDP_DesktopWidth),
                    freerdp_settings_get_uint32(context->settings, FreeRDP_DesktopHeight));
}

BOOL onPostConnect(freerdp* instance) {
  if (!gdi_init(instance, PIXEL_FORMAT_BGRX32)) {
    return FALSE;
  }
  instance->context->update->DesktopResize = onDesktopResize;
  return TRUE;
}

void onPostDisconnect(freerdp* instance) {
  gdi_free(instance);
}

} // namespace

MiniRdpClient::MiniRdpClient() {
  m_instance = freerdp_new();
  m_instance->ContextSize = sizeof(rdpContext);
  m_instance->PostConnect = onPostConnect;
  m_instance->PostDisconnect = onPostDisconnect;
  freerdp_context_new(m_instance);
}

MiniRdpClient::~MiniRdpClient() {
  if (m_connected) {
    freerdp_disconnect(m_instance);
  }
  freerdp_context_free(m_instance);
  freerdp_free(m_instance);
}

bool MiniRdpClient::connect(uint16_t port, const std::string& user, const std::string& password,
                            const std::string& sha256) {
  rdpSettings* s = m_instance->context->settings;
  const std::string pin = "sha256:" + sha256;
  const bool ok = freerdp_settings_set_string(s, FreeRDP_ServerHostname, "127.0.0.1") &&
                  freerdp_settings_set_uint32(s, FreeRDP_ServerPort, port) &&
                  freerdp_settings_set_string(s, FreeRDP_Username, user.c_str()) &&
                  freerdp_settings_set_string(s, FreeRDP_Password, password.c_str()) &&
                  freerdp_settings_set_string(s, FreeRDP_Domain, "") &&
                  freerdp_settings_set_bool(s, FreeRDP_NlaSecurity, TRUE) &&
                  freerdp_settings_set_bool(s, FreeRDP_TlsSecurity, FALSE) &&
                  freerdp_settings_set_bool(s, FreeRDP_RdpSecurity, FALSE) &&
                  freerdp_settings_set_bool(s, FreeRDP_SoftwareGdi, TRUE) &&
                  freerdp_settings_set_uint32(s, FreeRDP_ColorDepth, 32) &&
                  freerdp_settings_set_string(s, FreeRDP_CertificateAcceptedFingerprints, pin.c_str());
  m_connected = ok && freerdp_connect(m_instance);
  return m_connected;
}

bool MiniRdpClient::pump(int ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    HANDLE handles[MAXIMUM_WAIT_OBJECTS];
    const DWORD count = freerdp_get_event_handles(m_instance->context, handles, MAXIMUM_WAIT_OBJECTS);
    if (count == 0 || WaitForMultipleObjects(count, handles, FALSE, 20) == WAIT_FAILED ||
        !freerdp_check_event_handles(m_instance->context)) {
      return false;
    }
  }
  return true;
}

std::optional<uint32_t> MiniRdpClient::marker() const {
  const rdpGdi* gdi = m_instance->context->gdi;
  if (gdi == nullptr) {
    return std::nullopt;
  }
  return gc::testguest::findMarker(gdi->primary_buffer, static_cast<int>(gdi->stride), gdi->width,
                                   gdi->height);
}

int MiniRdpClient::width() const {
  return m_instance->context->gdi ? m_instance->context->gdi->width : 0;
}
int MiniRdpClient::height() const {
  return m_instance->context->gdi ? m_instance->context->gdi->height : 0;
}

uint32_t MiniRdpClient::pixel(int x, int y) const {
  const rdpGdi* gdi = m_instance->context->gdi;
  const uint8_t* p = gdi->primary_buffer + static_cast<size_t>(y) * gdi->stride + static_cast<size_t>(x) * 4;
  return (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[1]) << 8) | p[0];
}

bool MiniRdpClient::sendKey(uint16_t flags, uint8_t scancode) {
  return freerdp_input_send_keyboard_event(m_instance->context->input, flags, scancode);
}

bool MiniRdpClient::sendMouse(uint16_t flags, uint16_t x, uint16_t y) {
  return freerdp_input_send_mouse_event(m_instance->context->input, flags, x, y);
}
