/* A request parked while the work that answers it runs off the event loop
 * (a removal in slices, a seal in a forked helper), unless its connection
 * goes meanwhile (evhttp saw the client go, the tracker closed it with its
 * sandbox, the backend is stopping): then the request is freed at once, the
 * work goes on, and nobody is answered. Embed one in the work's own state:
 *
 *   http_parked_hold(&w->parked, req);      before starting the work
 *   ...
 *   struct evhttp_request *req = http_parked_take(&w->parked);
 *   if (req) { reply; request_log(...); }   when the work is done (or could not start)
 *
 * Built on http_conn_set_closecb (http_conns.h). */
#ifndef E2B_BACKEND_HTTP_PARKED_H
#define E2B_BACKEND_HTTP_PARKED_H

struct evhttp_connection;
struct evhttp_request;

struct http_parked {
	struct evhttp_request *req; /* NULL once the client has gone */
	struct evhttp_connection *evcon;
};

/* Parks req (its handler then answers later, not now). */
void http_parked_hold(struct http_parked *p, struct evhttp_request *req);
/* Ends the parking, once: the request to answer, or NULL when the client
 * has gone (the request is freed already). */
struct evhttp_request *http_parked_take(struct http_parked *p);

#endif
