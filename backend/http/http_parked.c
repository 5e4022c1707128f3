/* Requests parked over off-loop work (http_parked.h). */
#include "http/http_parked.h"

#include "http/http_conns.h"

#include <event2/http.h>
#include <stddef.h>

static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct http_parked *p = arg;
	http_conn_gone_free_request(p->req);
	p->req = NULL;
}

void http_parked_hold(struct http_parked *p, struct evhttp_request *req)
{
	p->req = req;
	p->evcon = evhttp_request_get_connection(req);
	http_conn_set_closecb(p->evcon, on_client_gone, p);
}

struct evhttp_request *http_parked_take(struct http_parked *p)
{
	if (p->req)
		http_conn_set_closecb(p->evcon, NULL, NULL);
	return p->req;
}
