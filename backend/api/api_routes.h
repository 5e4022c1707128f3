/* The control-plane listener's router: CORS preflight, route and method
 * matching (404/405 in JSON), API-key check, then the handler. */
#ifndef E2B_BACKEND_API_ROUTES_H
#define E2B_BACKEND_API_ROUTES_H

struct evhttp_request;

/* evhttp callback; arg is a struct api_ctx *. */
void api_dispatch(struct evhttp_request *req, void *arg);

#endif
