// Exit codes: the CLI's contract with scripts and CI (see README "Exit codes").
//
// 0 the distributed program refines its sequential model / the command succeeded; 1 a violation
// was found; 2 bad input or usage (with a one-line "graphguard: error: ..." message); 3 unknown
// (a limit was hit, nothing could be concluded); 4 internal error (a bug in GraphGuard itself).
#pragma once

namespace gg::report {

enum ExitCode : int {
  kExitOk = 0,
  kExitViolation = 1,
  kExitBadInput = 2,
  kExitUnknown = 3,
  kExitInternalError = 4,
};

}  // namespace gg::report
