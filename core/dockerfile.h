/* dockerfile.h — a Dockerfile as E2B's template API takes it, converted the
 * way the official SDK's Template().fromDockerfile() does (USER root and
 * WORKDIR / first; RUN, COPY/ADD per source, ENV, WORKDIR, USER as steps;
 * CMD/ENTRYPOINT as the start command with `sleep 20` as the ready check;
 * USER user and WORKDIR /home/user last unless the file set them), but with
 * Docker's own reading of words, quotes, JSON forms and variables where the
 * SDK's differs. What E2B's steps cannot express is refused, naming the line
 * (docs/templates.md, "Dockerfiles"). Pure: no core, no I/O. */
#ifndef E2BW_DOCKERFILE_H
#define E2BW_DOCKERFILE_H

#include "cJSON.h"

/* On success returns NULL and sets *plan to E2B's TemplateBuildStartV2
 * without COPY hashes ({"fromImage", "steps":[{"type","args","force":false}],
 * "startCmd"?, "readyCmd"?}) and *lines to the Dockerfile line of E2B's step
 * k at index k (0: the FROM; a step the conversion adds has line 0). Else
 * returns an invalid_params error (data.field "dockerfile", data.line), or
 * NULL with *plan NULL when out of memory. */
cJSON *e2bw_dockerfile_parse(const char *text, cJSON **plan, cJSON **lines);

#endif
