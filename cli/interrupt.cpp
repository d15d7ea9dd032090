#include "cli/interrupt.h"

#include <csignal>
#include <cstring>
#include <unistd.h>

#include "sim/error.h"

namespace sfumato::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
    if (g_signal != 0) {  // second signal: stop now
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    g_signal = sig;
    static const char msg[] = "\nsfumato: stopping at the next slice (a second signal ends at once)\n";
    const ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)n;
}

}  // namespace

void install_signal_handlers() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    std::signal(SIGXFSZ, SIG_IGN);
}

int stop_signal() { return g_signal; }

void throw_if_interrupted(const std::string& when) {
    const int sig = g_signal;
    if (sig == 0) return;
    const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
    throw SimError(kExitSignalBase + sig, std::string("interrupted by ") + name + " " + when + "; no output written");
}

}  // namespace sfumato::cli
