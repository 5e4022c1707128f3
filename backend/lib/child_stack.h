/* A stack for a child cloned with CLONE_VM (it shares the backend's memory
 * until it executes): mapped once per caller and kept, since mapping and
 * unmapping one per child cost page faults and, the backend having threads,
 * a TLB shootdown on every CPU. The caller keeps the pointer (one per thread
 * and purpose) and must know the last child on it is done with it. */
#ifndef E2B_BACKEND_CHILD_STACK_H
#define E2B_BACKEND_CHILD_STACK_H

#include <stddef.h>

/* The top of the stack *kept (size bytes), mapped on the first call, ready
 * for the next child; NULL (errno) when it cannot be mapped. */
char *child_stack_top(char **kept, size_t size);

#endif
