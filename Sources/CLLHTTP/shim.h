#ifndef UVNETWORKING_CLLHTTP_SHIM_H
#define UVNETWORKING_CLLHTTP_SHIM_H
// llhttp is built in strict mode by scripts/install-deps.sh (or comes from libllhttp-dev).
#include <llhttp.h>
#endif
