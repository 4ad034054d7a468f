// Operator credentials for the guest, only ever in locked memory. Moved, never copied;
// each buffer wipes itself when cleared or destroyed.
#pragma once

#include "privacy/SecureBuffer.h"

namespace gc {

struct Credentials {
  SecureBuffer username;
  SecureBuffer password;
  SecureBuffer domain;

  void wipe() {
    username.clear();
    password.clear();
    domain.clear();
  }
};

} // namespace gc
