/* rfc3339.h — reading the control plane's RFC 3339 times (E2B's endAt). */
#ifndef E2BW_RFC3339_H
#define E2BW_RFC3339_H

/* Milliseconds since the Unix epoch of "YYYY-MM-DDTHH:MM:SS[.fff]..." into
 * *ms. The zone is taken as UTC, as E2B writes it ("Z"). 0, or -1 when the
 * text has no such date and time. */
int e2bw_rfc3339_ms(const char *text, double *ms);

#endif
