// The error every lane-tune component throws at its edges: a message a user can act on.
#pragma once

#include <stdexcept>
#include <string>

namespace lt {

// A failure with a message that says what is wrong and, where it helps, what to do.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An Error for a file that does not exist: the CLI exits with its "not found" status for it.
class NotFound : public Error {
 public:
  using Error::Error;
};

}  // namespace lt
