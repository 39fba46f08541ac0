// The service manager's readiness protocol (sd_notify(3), systemd's Type=notify), through Debian's libsystemd.
#pragma once

#include <string>

namespace lt::coord {

// Tells the service manager that the coordinator serves (READY=1) with a status line; returns whether a manager was
// told (false where none listens: $NOTIFY_SOCKET unset, as outside systemd).
bool notify_ready(const std::string& status);
// Tells the service manager that the coordinator is stopping (STOPPING=1); returns whether a manager was told.
bool notify_stopping();

}  // namespace lt::coord
