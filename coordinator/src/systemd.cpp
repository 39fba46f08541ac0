// Readiness for the service manager: sd_notify from libsystemd, which knows the protocol's details (abstract socket
// names, credentials) and does nothing where $NOTIFY_SOCKET is unset.
#include "coordinator/systemd.hpp"

#include <systemd/sd-daemon.h>

namespace lt::coord {

bool notify_ready(const std::string& status) {
  return sd_notify(0, ("READY=1\nSTATUS=" + status).c_str()) > 0;
}

bool notify_stopping() {
  return sd_notify(0, "STOPPING=1") > 0;
}

}  // namespace lt::coord
