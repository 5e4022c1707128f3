/* Secret names and identifiers: what a name may be, its canonical
 * (lower-case) form, and the identifier form "sec_<20 of [a-z0-9]>" that
 * no name can take. */
#ifndef E2B_BACKEND_SECRETS_NAMES_H
#define E2B_BACKEND_SECRETS_NAMES_H

#include "secrets/secrets.h"

#include <stdbool.h>

struct err;

/* Writes name's canonical form to out: ASCII letters lower-cased, then 1
 * to SECRETS_NAME_MAX of [a-z0-9._-], starting with a letter or a digit,
 * not with the reserved "sec_". 0, else -1 with why not in err (status 400;
 * a message that never quotes the name: a client may have swapped name and
 * value). err may be NULL. */
int secrets_names_canonical(const char *name, char out[SECRETS_NAME_MAX + 1], struct err *err);
/* Whether id is an identifier this backend could have made. */
bool secrets_names_is_id(const char *id);
/* A fresh identifier in out. 0, or -1 when the kernel's random source fails. */
int secrets_names_new_id(char out[SECRETS_ID_LEN + 1]);

#endif
