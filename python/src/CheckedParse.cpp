//===- CheckedParse.cpp - parse a user's program in a child process -------===//
//
// Part of gnnc's Python package. The tools parse user text inside a
// ParserQuarantine, which works by defining `free` in the executable; an
// extension module loaded into Python cannot interpose on the
// interpreter's `free`. So text is parsed in a forked child first, and the
// interpreter's process parses it only once the child found it valid: a
// parse that succeeds never writes into freed memory.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "GNN/InitAll.h"
#include "GNN/Runner/Program.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gnnc::python;

namespace {
/// In the child: parses and writes the diagnostics to `fd`; never returns.
[[noreturn]] void parseInChild(const std::string &text, const std::string &name,
                               int fd) {
  mlir::DialectRegistry registry;
  mlir::gnn::registerAllDialectsAndExtensions(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  auto buffer =
      llvm::MemoryBuffer::getMemBuffer(text, name,
                                       /*RequiresNullTerminator=*/false);
  bool ok = mlir::gnn::Program::parses(context, buffer->getMemBufferRef(), os);
  os.flush();
  for (size_t done = 0; done < diagnostics.size();) {
    ssize_t n =
        ::write(fd, diagnostics.data() + done, diagnostics.size() - done);
    if (n <= 0)
      break;
    done += size_t(n);
  }
  ::_exit(ok ? 0 : 1);
}

/// Everything the child writes, until it closes the pipe (`closed` set)
/// or `deadline`.
std::string readAll(int fd, std::chrono::steady_clock::time_point deadline,
                    bool &closed) {
  std::string out;
  closed = false;
  char chunk[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR)
      break;
    if (ready <= 0)
      continue;
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      closed = n == 0;
      break;
    }
    out.append(chunk, size_t(n));
  }
  return out;
}
} // namespace

void gnnc::python::checkParsesApart(const std::string &text,
                                    const std::string &name) {
  int fds[2];
  if (::pipe(fds) != 0)
    return; // Cannot check apart: the in-process parse still reports.
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (child == 0) {
    ::close(fds[0]);
    parseInChild(text, name, fds[1]);
  }
  ::close(fds[1]);
  std::string diagnostics;
  bool closed = false;
  {
    py::gil_scoped_release released;
    // A parse takes milliseconds; a child stuck on a lock that another of
    // the parent's threads held at fork is given up on.
    diagnostics = readAll(
        fds[0], std::chrono::steady_clock::now() + std::chrono::seconds(60),
        closed);
  }
  ::close(fds[0]);
  int status = 0;
  if (!closed)
    ::kill(child, SIGKILL);
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR)
    ;
  if (!closed)
    raise("parsing '" + name + "' did not finish within 60 s");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return;
  while (!diagnostics.empty() && diagnostics.back() == '\n')
    diagnostics.pop_back();
  if (WIFSIGNALED(status))
    raise("the parser crashed on '" + name + "' (signal " +
          std::to_string(WTERMSIG(status)) + ")");
  raise(diagnostics.empty() ? "'" + name + "' is not a valid program"
                            : diagnostics);
}
