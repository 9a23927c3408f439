// torchx-supervisor: the detached per-app process of the local scheduler (see supervisor.h).
#include "schedulers/local/supervisor.h"

int main(int argc, char** argv) { return torchx::schedulers::local::SupervisorMain(argc, argv); }
